/**
 * A stream whose opening events wait for its first event (or `holdMs`, whichever comes first), so that a run's
 * opening and its first news leave together: one database write and one socket write where there would be two.
 */

/** `opening`, then every event of `rest`; the opening is yielded once `rest` has its first event, ended, failed or
 * kept silent for `holdMs`. A failure of `rest` is thrown after the opening. */
export async function* heldOpening<T>(opening: T[], rest: AsyncGenerator<T>, holdMs: number): AsyncGenerator<T> {
  let finished = false;
  try {
    // Settled either way, so a failure waits behind the opening instead of racing it.
    const first = rest.next().then(
      (result) => ({ result }),
      (error: unknown) => ({ error }),
    );
    let timer: NodeJS.Timeout | undefined;
    const held = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), holdMs)));
    const early = await Promise.race([first, held]);
    clearTimeout(timer);
    yield* opening;
    const settled = early ?? (await first);
    if ('error' in settled) throw settled.error;
    let result = settled.result;
    while (!result.done) {
      yield result.value;
      result = await rest.next();
    }
    finished = true;
  } finally {
    // The consumer stopped early (or `rest` threw): `rest` gets to run its own cleanup.
    if (!finished) await rest.return(undefined as never).catch(() => undefined);
  }
}
