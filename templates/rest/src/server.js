/**
 * `npm start`: the seller, configured from the environment (src/config.js). Prints one
 * line with its URL once it listens; SIGINT/SIGTERM close it after in-flight calls end.
 */
import { buildApp } from './app.js';
import { configFromEnv } from './config.js';

let config;
try {
  config = configFromEnv();
} catch (e) {
  console.error(e.message);
  process.exit(2);
}

const app = await buildApp({ ...config, logger: process.env.LOG === '1' });
const url = await app.listen({ host: config.host, port: config.port });
console.log(`{{name}} listening on ${url}`);

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    app.close().then(() => process.exit(0), () => process.exit(1));
  });
}
