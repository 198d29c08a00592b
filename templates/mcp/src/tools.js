/**
 * What this server sells: each paid tool's input and output schemas (zod, as MCP wants
 * them) and the plain function behind it. Nothing here knows about payments: the tools run
 * only once a call is paid (src/server.js wraps them with agentpay-sdk/mcp/seller).
 */
import { z } from 'zod';

const WORD = /[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu;
const HAS_WORD = /[\p{L}\p{N}]/u;
const STOP_WORDS = new Set(
  'a an and are as at be but by for from has have he her his i in is it its of on or our she so that the their them they this to was we were what when which who will with you your'.split(' '),
);
const WORDS_PER_MINUTE = 230;

/** Words, sentences and characters of a text, and minutes to read it (one decimal). */
export function textStats(text) {
  const words = text.match(WORD)?.length ?? 0;
  const sentences = text.split(/[.!?]+(?:\s|$)/u).filter((s) => HAS_WORD.test(s)).length;
  return {
    words,
    sentences,
    characters: [...text].length,
    readingMinutes: Math.round((words / WORDS_PER_MINUTE) * 10) / 10,
  };
}

/** The `limit` most frequent words (lowercased, stop words left out); ties in order of first use. */
export function topWords(text, limit) {
  const counts = new Map();
  for (const w of text.toLowerCase().match(WORD) ?? []) {
    if (!STOP_WORDS.has(w)) counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]).slice(0, limit).map(([word, count]) => ({ word, count }));
}

const Text = z.string().min(1).max(100_000).describe('the text, up to 100000 characters');

/** The paid tools by MCP tool name; each is published as its own capability (src/capabilities.js). */
export const paidTools = {
  text_stats: {
    description: 'Counts the words, sentences and characters of a text and estimates its reading time.',
    inputSchema: { text: Text },
    outputSchema: { words: z.number().int(), sentences: z.number().int(), characters: z.number().int(), readingMinutes: z.number() },
    run: ({ text }) => textStats(text),
  },
  top_words: {
    description: 'The most frequent words of a text, leaving out common English stop words.',
    inputSchema: { text: Text, limit: z.number().int().min(1).max(50).default(5).describe('how many words, 1 to 50 (default 5)') },
    outputSchema: { words: z.array(z.object({ word: z.string(), count: z.number().int() })) },
    run: ({ text, limit }) => ({ words: topWords(text, limit) }),
  },
};
