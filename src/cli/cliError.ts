/** An error that ends the command with `exitCode`; its message is printed as is (no stack). */
export class CliError extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
  }
}
