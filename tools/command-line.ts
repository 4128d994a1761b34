import { parseArgs } from 'node:util';

/*
 * The command line of a command that takes no option (docs: the README's "Commands"): `--help`
 * says what it does, and anything else is refused, rather than run as if it were not there.
 */

/** Whether the command is to run: false once it has answered `--help` (exit 0) or refused its arguments (exit 2). */
export const runsWithoutOptions = (usage: string): boolean => {
  try {
    const { values } = parseArgs({ options: { help: { type: 'boolean' } } });
    if (!values.help) return true;
    console.log(usage);
  } catch (error) {
    console.error(`${(error as Error).message}\n${usage}`);
    process.exitCode = 2;
  }
  return false;
};
