/** Wire shapes of the API, as the SDK and the CLI see them. Amounts are strings. */
export interface Balance {
  balanceMinor: string;
  availableMinor: string;
  currency: string;
}

export interface Wallet {
  id: string;
  ownerType: 'agent' | 'workspace' | 'settlement' | 'platform';
  ownerId: string;
  publicKeyPem: string | null;
  status: string;
  frozen: boolean;
  currency: string;
  createdAt: string;
  updatedAt: string;
  balance?: Balance;
}

export interface LedgerEntry {
  id: string;
  walletId: string;
  seq: number;
  type: string;
  amountMinor: string;
  holdMinor: string;
  balanceAfterMinor: string;
  heldAfterMinor: string;
  currency: string;
  transactionId: string | null;
  reference: string | null;
  memo: string | null;
  createdAt: string;
}

export interface PlatformPublicKey {
  publicKeyPem: string;
  signingKeyId: string;
}

export interface ReceiptKey {
  keyId: string;
  publicKeyPem: string;
  status: 'current' | 'retired';
  createdAt: string;
  retiredAt: string | null;
}

export interface Health {
  status: string;
  instance: string;
  time: string;
}
