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

  /** The rows of one run. Inside a transaction (its connection is taken) it runs as a plain knex.raw. */
  async rows(db: DbOrTx, values: unknown[]): Promise<Array<Record<string, any>>> {
    if ('isTransaction' in db && db.isTransaction) {
      return ((await db.raw(this.sql, values as never[])) as { rows: Array<Record<string, any>> }).rows;
    }
    const connection = await db.client.acquireConnection();
    try {
      const result = await connection.query({ name: this.name, text: this.text, values });
      return result.rows as Array<Record<string, any>>;
    } finally {
      await db.client.releaseConnection(connection);
    }
  }
}
