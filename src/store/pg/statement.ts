/**
 * One execution of a named prepared statement of the hot path, as a node-postgres query object:
 * a subclass of `pg.Query`, the driver's extension point for query classes (its pipeline mode
 * accepts only subclasses of Query).
 *
 * Measured (docs/performance.md, "PostgreSQL against SQLite"): for every statement node-postgres
 * copied the query config property by property (`cloneQueryConfig`), had the server describe the
 * result (a Describe message and its RowDescription), built the row parsers and an empty row from
 * that description (`addFields`) and a row object by column name, which the store then mapped
 * again: together about a tenth of the gateway's CPU per paid call. Here a statement's result is
 * described once per process (at its first execution, on whichever connection), its column
 * parsers are kept by statement name, and rows come back as arrays of parsed values in the
 * statement's column order, for `Table.row` (../sql/sql.ts) to map by position.
 */
import { createRequire } from 'node:module';
import pg from 'pg';

/** node-postgres's own parameter encoding (dates, buffers, arrays, objects), as its Query binds values */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils.js') as { prepareValue: (v: unknown) => unknown };

type Parser = (text: string) => unknown;

/**
 * The column parsers of each statement (by name) that has run in this process; [] for no rows.
 * Shared by every connection and database: the schema uses built-in types only, whose ids are the
 * same everywhere (a type of its own, an enum say, would differ between databases).
 */
const described = new Map<string, Parser[]>();

/** The parts of node-postgres's connection a query drives (pg's Query uses the same calls). */
interface Connection {
  parsedStatements: Record<string, string>;
  submittedNamedStatements: Record<string, string>;
  parse(m: { text: string; name: string; types?: unknown[] }): void;
  bind(m: { portal: string; statement: string; values: unknown[]; binary: boolean }): void;
  describe(m: { type: 'P'; name: string }): void;
  execute(m: { portal: string; rows?: number }): void;
  sync(): void;
}

type Done = (error: unknown, rows?: unknown[][], count?: number) => void;

/** A statement's rows: each an array of the statement's columns, parsed, in its select-list order. */
export interface Rows {
  rows: unknown[][];
  /** how many rows the statement changed or returned (its command tag's count), when it says */
  count?: number;
}

const QueryBase = pg.Query as unknown as new (text: string) => {
  name?: string;
  text: string;
  values?: unknown[];
  hasBeenParsed(connection: Connection): boolean;
};

class Statement extends QueryBase {
  private readonly out: unknown[][] = [];
  private parsers: Parser[] | undefined;
  private describing = false;
  private failure: unknown;
  private settled = false;
  private count: number | undefined;

  constructor(name: string, text: string, values: unknown[], private readonly done: Done) {
    // a text config: node-postgres copies nothing
    super(text);
    this.name = name;
    this.values = values;
    this.parsers = described.get(name);
  }

  /**
   * As node-postgres's Query.prepare, with two differences: no Describe once the statement's
   * result is known, and the values are encoded before anything is sent. A value that cannot be
   * encoded then sends only a Sync (this query still gets its answer in the pipeline) and leaves
   * the connection's prepared statements as they were (node-postgres closes the statement there,
   * which its next use on the connection then finds missing: 26000).
   */
  prepare(connection: Connection): void {
    const name = this.name!;
    let values: unknown[];
    try {
      values = (this.values ?? []).map(prepareValue);
    } catch (e) {
      connection.sync();
      this.handleError(e);
      return;
    }
    if (!this.hasBeenParsed(connection)) {
      connection.parse({ text: this.text, name });
      connection.submittedNamedStatements[name] = this.text;
    }
    connection.bind({ portal: '', statement: name, values, binary: false });
    if (!this.parsers) {
      this.describing = true;
      connection.describe({ type: 'P', name: '' });
    }
    connection.execute({ portal: '' });
    connection.sync();
  }

  handleRowDescription(msg: { fields: { dataTypeID: number; format?: string }[] }): void {
    this.parsers = msg.fields.map((f) => pg.types.getTypeParser(f.dataTypeID, (f.format ?? 'text') as 'text'));
    described.set(this.name!, this.parsers);
  }

  handleDataRow(msg: { fields: (string | null)[] }): void {
    if (this.failure !== undefined) return;
    const parsers = this.parsers;
    if (!parsers) {
      this.failure = new Error(`statement ${this.name} returned rows without a row description`);
      return;
    }
    const fields = msg.fields;
    const row = new Array<unknown>(fields.length);
    try {
      for (let i = 0; i < fields.length; i++) {
        const v = fields[i];
        row[i] = v === null || v === undefined ? null : parsers[i]!(v);
      }
    } catch (e) {
      this.failure = e;
      return;
    }
    this.out.push(row);
  }

  handleCommandComplete(msg?: { text?: string }): void {
    // a write's tag (UPDATE 3, INSERT 0 1, DELETE 2); a select's rows say how many there are
    const n = msg?.text && !msg.text.startsWith('SELECT') ? /(\d+)$/.exec(msg.text) : null;
    if (n) this.count = Number(n[1]);
    // described, and no RowDescription came: a statement without rows
    if (this.describing && !this.parsers) {
      this.parsers = [];
      described.set(this.name!, this.parsers);
    }
  }

  handleEmptyQuery(): void {}

  handleError(error: unknown): void {
    this.finish(error);
  }

  handleReadyForQuery(): void {
    this.finish(this.failure, this.out, this.count);
  }

  private finish(error: unknown, rows?: unknown[][], count?: number): void {
    if (this.settled) return;
    this.settled = true;
    if (error !== undefined) this.done(error);
    else this.done(undefined, rows, count);
  }
}

/** Runs the named prepared statement `name` on a connection (parsed there once) and returns its rows as arrays. */
export function execute(client: pg.PoolClient | pg.Client, name: string, text: string, values: unknown[]): Promise<Rows> {
  return new Promise<Rows>((resolve, reject) => {
    const statement = new Statement(name, text, values, (error, rows, count) => {
      if (error !== undefined) reject(error);
      else resolve({ rows: rows!, count });
    });
    client.query(statement as unknown as pg.QueryConfig);
  });
}
