/** The domain services one gateway runs, built once from its dependencies. */
import type { DomainContext } from '../domain/context.js';
import { SigningKeys, type PrivateKeyFiles } from '../domain/signing-keys.js';
import { WalletService } from '../domain/wallets.js';
import type { GatewayConfig } from './config.js';

export interface Services {
  ctx: DomainContext;
  config: GatewayConfig;
  signingKeys: SigningKeys;
  wallets: WalletService;
}

export async function buildServices(ctx: DomainContext, config: GatewayConfig, keyFiles: PrivateKeyFiles): Promise<Services> {
  const signingKeys = new SigningKeys(ctx, keyFiles);
  await signingKeys.init();
  return {
    ctx,
    config,
    signingKeys,
    wallets: new WalletService(ctx, { sandbox: config.mode === 'sandbox' }),
  };
}
