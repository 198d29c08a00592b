import { describe, expect, it } from 'vitest';
import { textStats, topWords } from '../src/tools.js';

describe('textStats', () => {
  it('counts words, sentences and characters, and estimates the reading time', () => {
    expect(textStats('Agents pay per call. Sellers get paid!')).toEqual({ words: 7, sentences: 2, characters: 38, readingMinutes: 0 });
    expect(textStats('word '.repeat(460)).readingMinutes).toBe(2);
  });

  it('counts letters of any script, and words with apostrophes or hyphens as one', () => {
    expect(textStats("Ça va? L'agent a payé — well-known, isn't it.")).toMatchObject({ words: 8, sentences: 2 });
  });
});

describe('topWords', () => {
  it('returns the most frequent words without stop words, ties in order of first use', () => {
    expect(topWords('The agent pays. The agent calls; the seller answers the agent and pays.', 3)).toEqual([
      { word: 'agent', count: 3 },
      { word: 'pays', count: 2 },
      { word: 'calls', count: 1 },
    ]);
  });

  it('returns fewer words when the text has fewer', () => {
    expect(topWords('and the of', 5)).toEqual([]);
  });
});
