/**
 * `agentpay ID --help` for many ids in one process (a Node start-up and oclif's config load once,
 * not once per page): oclif's own `run`, as bin/run.js reaches it through `execute`, with the
 * built CLI's config (dist/, its help class). argv: the package root, then the ids (':' between
 * words, '' for the root). Prints one JSON object: id -> { exitCode, stdout }.
 * test/cli/shell/help-width.test.ts also runs a few pages through bin/run.js and compares.
 */
import { Config, run } from '@oclif/core';

const [root, ...ids] = process.argv.slice(2);
const write = process.stdout.write.bind(process.stdout);
const pages = {};
for (const id of ids) {
  let out = '';
  process.stdout.write = (chunk, encoding, cb) => {
    out += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString();
    (typeof encoding === 'function' ? encoding : cb)?.();
    return true;
  };
  let exitCode = 0;
  try {
    // a fresh config each time: one that showed a command's help finds no other command after it
    await run([...(id ? id.split(':') : []), '--help'], await Config.load(root));
  } catch (e) {
    exitCode = e?.oclif?.exit ?? 1;
    out += `\n${e?.stack ?? e}`;
  } finally {
    process.stdout.write = write;
  }
  pages[id] = { exitCode, stdout: out };
}
write(JSON.stringify(pages));
