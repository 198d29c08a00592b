/**
 * What a store tells whoever watches it (the gateway's metrics), without knowing who: plain
 * callbacks, so the store stays free of any metrics library. Every member is optional.
 */
export interface StoreObserver {
  /** one commit took `seconds` from its start to COMMIT, carrying `transactions` transactions */
  committed?(seconds: number, transactions: number): void;
  /** a commit reached the disk `seconds` after its COMMIT (stores that sync after COMMIT) */
  synced?(seconds: number): void;
}
