/**
 * Crons as the API sees them: a schedule (in `timezone`, UTC by default, until `end_time`), a run payload, and
 * `next_run_date`, the tick the scheduler fires next. A thread cron queues runs on its thread; a stateless one queues
 * threadless runs (`on_run_completed: delete`, the default, leaves no thread behind) or, with `keep`, a new thread
 * per run.
 */
import crypto from 'node:crypto';
import { NotFoundError } from '@graphx/kit/errors';
import type { AuthUser } from '../auth/authUser';
import type { AssistantDirectory } from '../assistants';
import type { Cron, CronStore } from '../storage/cronStore';
import { nextRunDate } from './cronSchedule';
import { scopedToThread } from './threadScope';

/** Fields of a cron body that describe the cron itself; every other field is the run payload. */
const CRON_FIELDS = [
  'schedule',
  'timezone',
  'end_time',
  'enabled',
  'on_run_completed',
  'metadata',
  'assistant_id',
  'on_disconnect',
];

export type CronBody = Record<string, unknown> & {
  assistant_id?: string;
  schedule?: string;
  timezone?: string | null;
  end_time?: Date | null;
  enabled?: boolean;
  on_run_completed?: 'delete' | 'keep';
  metadata?: Record<string, unknown> | null;
};

function payloadOf(body: CronBody): Record<string, unknown> {
  return Object.fromEntries(Object.entries(body).filter(([key, value]) => !CRON_FIELDS.includes(key) && value !== undefined));
}

const isoOrNull = (value: Date | null | undefined) => (value ? value.toISOString() : null);

function nextTick(cron: Pick<Cron, 'schedule' | 'timezone' | 'end_time'>): string | null {
  return nextRunDate(cron.schedule, cron.timezone, cron.end_time, new Date())?.toISOString() ?? null;
}

export class CronService {
  constructor(private readonly deps: { crons: CronStore; assistants: AssistantDirectory }) {}

  /** The stored assistant id an assistant id or graph name stands for (unknown ones are kept, and match nothing). */
  async assistantIdOf(assistantIdOrGraph: string, user: AuthUser | null): Promise<string> {
    return this.deps.assistants.forRun(assistantIdOrGraph, user).then(
      (resolved) => resolved.assistant.assistant_id,
      () => assistantIdOrGraph,
    );
  }

  /**
   * The cron a create body describes, before the `crons:create` handler sees (and may stamp) it.
   * @throws NotFoundError for an unknown assistant (or one the caller may not read).
   */
  async draft(
    user: AuthUser | null,
    threadId: string | null,
    body: CronBody & { assistant_id: string; schedule: string },
  ): Promise<Cron> {
    const { assistant } = await this.deps.assistants.forRun(body.assistant_id, user);
    const payload = scopedToThread(payloadOf(body), threadId, ['body']);
    // A cron's tick must not vanish because the thread is busy: thread crons queue by default, as the anchor's runs do.
    if (threadId && payload.multitask_strategy === undefined) payload.multitask_strategy = 'enqueue';
    const now = new Date().toISOString();
    const cron: Cron = {
      cron_id: crypto.randomUUID(),
      assistant_id: assistant.assistant_id,
      thread_id: threadId,
      user_id: user?.identity ?? null,
      schedule: body.schedule,
      timezone: body.timezone ?? null,
      end_time: isoOrNull(body.end_time),
      enabled: body.enabled ?? true,
      on_run_completed: body.on_run_completed ?? 'delete',
      payload,
      metadata: { ...(body.metadata ?? {}) },
      next_run_date: null,
      created_at: now,
      updated_at: now,
    };
    return { ...cron, next_run_date: nextTick(cron) };
  }

  async create(cron: Cron, user: AuthUser | null): Promise<Cron> {
    return this.deps.crons.insert({ ...cron, next_run_date: nextTick(cron) }, user);
  }

  /**
   * Applies a PATCH: cron fields replace, run fields merge into the payload; a new schedule, zone, end or a re-enable
   * counts ticks from now (ticks missed while disabled are not caught up). The cron's runs then act as `user`, the one
   * who last defined it: whoever can change a cron (say, after its metadata named them owner) can only ever make it
   * run as themselves, never as the user who created it.
   * @throws NotFoundError when the cron is outside the filter.
   */
  async patch(cronId: string, body: CronBody, filter: Record<string, unknown>, user: AuthUser | null): Promise<Cron> {
    const current = await this.deps.crons.get(cronId, filter);
    if (!current) throw new NotFoundError(`Cron ${cronId} not found.`);
    const next: Cron = {
      ...current,
      schedule: body.schedule ?? current.schedule,
      timezone: body.timezone === undefined ? current.timezone : body.timezone,
      end_time: body.end_time === undefined ? current.end_time : isoOrNull(body.end_time),
      enabled: body.enabled ?? current.enabled,
      on_run_completed: body.on_run_completed ?? current.on_run_completed,
      metadata: body.metadata ? { ...current.metadata, ...body.metadata } : current.metadata,
      payload: { ...current.payload, ...scopedToThread(payloadOf(body), current.thread_id, ['body']) },
      user_id: user?.identity ?? null,
    };
    const retimed =
      ['schedule', 'timezone', 'end_time'].some((key) => body[key] !== undefined) || (next.enabled && !current.enabled);
    const updated = await this.deps.crons.update(retimed ? { ...next, next_run_date: nextTick(next) } : next, filter, user);
    if (!updated) throw new NotFoundError(`Cron ${cronId} not found.`);
    return updated;
  }
}
