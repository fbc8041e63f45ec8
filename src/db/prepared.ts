/**
 * Named prepared statements for the reads CI polls. Through the query builder each read was rebuilt and compiled by
 * knex, then parsed and planned again by PostgreSQL, on every request; a named statement is parsed and planned once
 * per pooled connection (pg remembers which connections know it), then runs as Bind/Execute alone.
 */
import type { DbOrTx } from './knex';

/** A statement written with `?` placeholders (as knex.raw takes them), sent to PostgreSQL as `$1…$n`. */
export class PreparedStatement {
  private readonly text: string;

  constructor(
    /** Unique per statement text: pg refuses one name with two texts on a connection. */
    private readonly name: string,
    private readonly sql: string,
  ) {
    let position = 0;
    this.text = sql.replace(/\?/g, () => `$${++position}`);
  }

  /**
   * The rows of one run, each as its values in the statement's column order. Arrays, not objects: pg would build
   * every row as a copy of a prebuilt object and fill it by name, then the repository read it by name into its record;
   * on a page of 20 revisions that was a tenth of the request's time. Inside a transaction (its connection is taken)
   * it runs as a plain knex.raw.
   */
  async values(db: DbOrTx): Promise<unknown[][]>;
  async values(db: DbOrTx, values: unknown[]): Promise<unknown[][]>;
  async values(db: DbOrTx, values: unknown[] = []): Promise<unknown[][]> {
    if ('isTransaction' in db && db.isTransaction) {
      const result = (await db.raw(this.sql, values as never[])) as {
        rows: Array<Record<string, unknown>>;
        fields: Array<{ name: string }>;
      };
      return result.rows.map((row) => result.fields.map((field) => row[field.name]));
    }
    const connection = await db.client.acquireConnection();
    try {
      const result = await connection.query({ name: this.name, text: this.text, values, rowMode: 'array' });
      return result.rows as unknown[][];
    } finally {
      await db.client.releaseConnection(connection);
    }
  }
}
