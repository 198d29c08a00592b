/**
 * "Did you mean": the known word nearest to a mistyped command or flag, by edit distance
 * (insertions, deletions, substitutions and swaps of two neighbouring letters each count 1,
 * so `serach` is 1 from `search`). Only a close word is suggested, never run: a guessed
 * command could move money.
 */

/** Optimal string alignment distance (Damerau-Levenshtein without repeated edits of a substring). */
export function editDistance(a: string, b: string): number {
  const x = [...a];
  const y = [...b];
  const d: number[][] = Array.from({ length: x.length + 1 }, (_, i) => Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[x.length]![y.length]!;
}

/** How far a word of this length may be from a suggestion: 1 up to 4 letters, 2 up to 8, then 3. */
function tolerance(length: number): number {
  return length <= 4 ? 1 : length <= 8 ? 2 : 3;
}

/**
 * The candidate nearest to `typed`, if one is close enough; a candidate that starts with what
 * was typed (`wallets bal` -> `balance`) counts as close. Ties go to the first in `candidates`;
 * two different candidates equally near and no prefix match give no suggestion.
 */
export function closest(typed: string, candidates: readonly string[]): string | undefined {
  const word = typed.toLowerCase();
  if (!word) return undefined;
  const unique = [...new Set(candidates)].filter((c) => c !== typed);
  const prefixed = unique.filter((c) => c.toLowerCase().startsWith(word));
  if (prefixed.length === 1) return prefixed[0];
  let best: { word: string; distance: number } | undefined;
  let tied = false;
  for (const c of unique) {
    const distance = editDistance(word, c.toLowerCase());
    if (distance > tolerance([...word].length)) continue;
    if (!best || distance < best.distance) {
      best = { word: c, distance };
      tied = false;
    } else if (distance === best.distance) tied = true;
  }
  return best && !tied ? best.word : undefined;
}
