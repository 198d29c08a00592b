/** What the CLI prints for a failure (a Report), and what it knows of the command that failed. */

export interface Report {
  code: string;
  message: string;
  details: Record<string, unknown>;
  exit: number;
  tryNext?: string;
  /** true for errors agentpay did not expect: print the stack and ask for a report */
  bug?: boolean;
}

export interface ReportContext {
  /** the gateway the command talked to, for connection errors */
  baseUrl?: string;
  /** the command as typed, e.g. "agentpay wallets fund", for usage hints */
  command?: string;
  /** the flags given on the command line (names without --), to name them instead of API fields */
  givenFlags?: readonly string[];
  /** every flag the command has (names without --): a field it refuses is named as that flag even when not typed */
  commandFlags?: readonly string[];
  /** every flag the command accepts, the global ones included (names without --): what a mistyped flag may have meant */
  knownFlags?: readonly string[];
  /** the API key used; its prefix (ap_w_, ap_p_, ap_o_) says its kind */
  apiKey?: string;
  /** the gateway data dir the command used, to name it in file and database errors */
  dataDir?: string;
  /** flags whose value oclif took from their environment variable (flag name -> variable), to name the variable */
  envFlags?: ReadonlyMap<string, string>;
}
