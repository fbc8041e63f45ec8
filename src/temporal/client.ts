/** Temporal client construction, shared by the API and the CLI. */
import { Client, Connection } from '@temporalio/client';

export async function createTemporalClient(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}
