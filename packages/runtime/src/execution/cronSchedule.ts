/** Cron expressions (croner: 5 fields, or 6 with seconds first), time zones, and the run id of one tick. */
import crypto from 'node:crypto';
import { Cron as CronPattern } from 'croner';

/** The first tick of `schedule` strictly after `after`, in `timezone` (UTC by default); null past `endTime`. */
export function nextRunDate(schedule: string, timezone: string | null, endTime: string | null, after: Date): Date | null {
  const next = new CronPattern(schedule, { timezone: timezone ?? 'UTC', paused: true }).nextRun(after);
  if (!next || (endTime && next.getTime() > new Date(endTime).getTime())) return null;
  return next;
}

/** The error croner gives for a schedule it cannot read (5 fields, or 6 with seconds first), or null. */
export function scheduleError(schedule: string): string | null {
  try {
    new CronPattern(schedule, { paused: true });
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

/** Whether `timezone` is an IANA zone name this runtime knows. */
export function isTimezone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

/** A UUID (version-5 layout) that names one tick of one cron. */
export function tickRunId(cronId: string, tick: Date): string {
  const bytes = crypto.createHash('sha1').update(`${cronId}@${tick.toISOString()}`).digest().subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
