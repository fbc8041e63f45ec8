/** `graphx images build`: builds (or finds, by content hash) the base and `graphx-runtime:<version>` images. */
import { loadConfig, projectRoot } from '../config';
import { ensureBaseImage } from '../containers/baseImage';
import { openContainerEngine } from '../containers';
import { ensureRuntimeImage } from '../containers/runtimeImage';

export async function runImagesBuild(options: { force?: boolean }): Promise<void> {
  const config = loadConfig();
  const { engine, close } = await openContainerEngine(config);
  try {
    const log = (line: string) => console.log(line);
    const baseRef = await ensureBaseImage({ engine, baseImage: config.runtimeBaseImage, log });
    const image = await ensureRuntimeImage({ engine, baseRef, projectRoot, log, force: options.force });
    console.log(`${image.built ? 'built' : 'up to date'}: ${image.versionRef} (${image.ref})`);
  } finally {
    await close();
  }
}
