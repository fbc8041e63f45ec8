/** Temporal client construction, shared by the API and the CLI. */
import { Client, Connection } from '@temporalio/client';

export async function createTemporalClient(address: string, namespace: string): Promise<Client> {
  const connection = await Connection.connect({ address });
  return new Client({ connection, namespace });
}

/** Bound of one Temporal call made by a readiness probe. */
const READINESS_DEADLINE_MS = 1_500;

/** A readiness check that asks the frontend for its system info (cheap, any namespace, no permissions needed). */
export function temporalReadinessCheck(connection: Pick<Connection, 'workflowService' | 'withDeadline'>): {
  name: string;
  check: () => Promise<unknown>;
} {
  return {
    name: 'temporal',
    check: () => connection.withDeadline(Date.now() + READINESS_DEADLINE_MS, () => connection.workflowService.getSystemInfo({})),
  };
}
