/** Webhook deliveries of a provider already acted on (codehost_push_deliveries). */
import type { DbOrTx } from '../knex';

export class PushDeliveryRepository {
  constructor(private readonly db: DbOrTx) {}

  /** Records a delivery; false when it was recorded before (a redelivery). Pass the transaction that acts on it. */
  async claim(providerPk: string, deliveryId: string): Promise<boolean> {
    const inserted = await this.db('codehost_push_deliveries')
      .insert({ provider_pk: providerPk, delivery_id: deliveryId, revisions_created: 0 })
      .onConflict(['provider_pk', 'delivery_id'])
      .ignore()
      .returning('delivery_id');
    return inserted.length > 0;
  }

  async setRevisionsCreated(providerPk: string, deliveryId: string, count: number): Promise<void> {
    await this.db('codehost_push_deliveries')
      .where({ provider_pk: providerPk, delivery_id: deliveryId })
      .update({ revisions_created: count });
  }
}
