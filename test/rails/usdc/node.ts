/**
 * A local EVM node for the tests: Hardhat's engine, EDR (`@nomicfoundation/edr`, the Rust EVM
 * behind Hardhat's network), served over JSON-RPC on HTTP at 127.0.0.1 on a port the OS picks, as
 * a Base node is reached. In process: `close()` stops the HTTP server; nothing else is left running.
 *
 * What it gives: instant mining (one block per transaction, as Hardhat's network does), the
 * accounts passed funded in the genesis block, reverted transactions mined with status 0 (not
 * refused), and Hardhat's test methods (`evm_mine`, `evm_increaseTime`, `evm_snapshot`/`evm_revert`,
 * `evm_setAutomine`: with it off, transactions wait in the pool and the next `evm_mine` takes them,
 * the highest tip first).
 */
import { createServer, type IncomingMessage, type Server } from 'node:http';
import {
  ContractDecoder, EdrContext, L1_CHAIN_TYPE, l1GenesisState, l1HardforkFromString, l1ProviderFactory, MineOrdering, type Provider,
} from '@nomicfoundation/edr';
import { hexToBytes, type Address } from 'viem';

/** the hardfork the chain runs (Base follows Ethereum's) */
export const HARDFORK = 'Prague';

let context: Promise<EdrContext> | undefined;

/** EDR wants one context per process (vitest runs each file in a process of its own) */
function edr(): Promise<EdrContext> {
  context ??= (async () => {
    const c = new EdrContext();
    await c.registerProviderFactory(L1_CHAIN_TYPE, l1ProviderFactory());
    return c;
  })();
  return context;
}

export interface LocalNode {
  url: string;
  close(): Promise<void>;
}

export interface LocalNodeOptions {
  chainId: number;
  /** accounts given `balanceWei` each in the genesis block */
  funded: Address[];
  balanceWei?: bigint;
}

async function provider(o: LocalNodeOptions): Promise<Provider> {
  const hardfork = l1HardforkFromString(HARDFORK);
  const balance = o.balanceWei ?? 1000n * 10n ** 18n;
  return (await edr()).createProvider(
    L1_CHAIN_TYPE,
    {
      allowBlocksWithSameTimestamp: true, // blocks mined fast (a test mines every 100 ms) keep the wall clock's time, not one second more each
      allowUnlimitedContractSize: false,
      bailOnCallFailure: false,
      bailOnTransactionFailure: false,
      chainId: BigInt(o.chainId),
      coinbase: hexToBytes('0xc014ba5ec014ba5ec014ba5ec014ba5ec014ba5e'),
      defaultTransactionGasLimit: 16_000_000n,
      genesisState: [...l1GenesisState(hardfork), ...o.funded.map((a) => ({ address: hexToBytes(a), balance }))],
      hardfork: HARDFORK,
      initialBaseFeePerGas: 1_000_000_000n,
      minGasPrice: 0n,
      mining: { autoMine: true, memPool: { order: MineOrdering.Priority } },
      network: { genesisBlockGasLimit: 30_000_000n },
      networkId: BigInt(o.chainId),
      observability: {},
      ownedAccounts: [],
      precompileOverrides: [],
    },
    { enable: false, decodeConsoleLogInputsCallback: () => [], printLineCallback: () => undefined },
    { subscriptionCallback: () => undefined },
    new ContractDecoder(),
  );
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** one JSON-RPC request (an object) through the provider; its answer as JSON text (EDR wants `params`, as Hardhat's server fills in) */
async function handle(p: Provider, request: unknown): Promise<string> {
  const req = request !== null && typeof request === 'object' && !('params' in request) ? { ...request, params: [] } : request;
  const r = await p.handleRequest(JSON.stringify(req));
  return typeof r.data === 'string' ? r.data : JSON.stringify(r.data);
}

export async function startLocalNode(o: LocalNodeOptions): Promise<LocalNode> {
  const p = await provider(o);
  const server: Server = createServer((req, res) => {
    void (async () => {
      let out: string;
      try {
        const parsed = JSON.parse(await body(req)) as unknown;
        if (Array.isArray(parsed)) {
          const answers: string[] = [];
          for (const r of parsed) answers.push(await handle(p, r)); // in order: a batch may depend on itself
          out = `[${answers.join(',')}]`;
        } else out = await handle(p, parsed);
      } catch (e) {
        out = JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32700, message: `not a JSON-RPC request: ${(e as Error).message}` } });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(out);
    })();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
