/** Entry points of the deployed application ("runtime"). Built by the runtime issue. */
export async function runRuntimeFromEnv(): Promise<void> {
  throw new Error('the runtime is not built yet');
}

export async function runDev(_options: { configPath: string; port: number; host: string }): Promise<void> {
  throw new Error('graphx dev is not built yet');
}
