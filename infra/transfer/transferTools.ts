import type { Clock } from '../clock.ts';
import { fts3ServersFromEnvironment } from './fts3Servers.ts';
import { MockTransferTool } from './mockTransferTool.ts';
import { PosixTransferTool } from './posixTransferTool.ts';
import type { TransferTool } from './transferTool.ts';

/**
 * The transfer tools this process can use, by the name an RSE's `transfertool` attribute (or the
 * `conveyor.transfertool` setting) gives. Each tool is made on first use and kept for the
 * process's life; `close` ends them all. A tool named but not known here makes the submission
 * fail (SUBMISSION_FAILED), which the finisher retries like any other.
 *
 * Tools that keep their jobs in memory (`mock`, `posix`) must be asked by the process that submitted to
 * them: run the submitter, poller and canceller roles of such tools in one process.
 */

/**
 * What a tool may need to start: where the service keeps its files, and the service's clock, which
 * the in-process tools (`mock`, `posix`) time their jobs by, so that a test moving the clock moves
 * them too. FTS keeps its own time.
 */
export type TransferToolSettings = Readonly<{ dataDir: string; clock: Clock }>;

export type TransferToolFactory = (settings: TransferToolSettings) => TransferTool;

/** One line per tool. */
const FACTORIES: Readonly<Record<string, TransferToolFactory>> = {
  mock: ({ clock }) => new MockTransferTool({ now: () => clock.now() }),
  posix: ({ clock }) => new PosixTransferTool({ now: () => clock.now() }),
  fts3: () => fts3ServersFromEnvironment(),
};

export class TransferTools {
  private readonly tools = new Map<string, TransferTool>();

  constructor(
    private readonly settings: TransferToolSettings,
    private readonly factories: Readonly<Record<string, TransferToolFactory>> = FACTORIES,
  ) {}

  /** The names of the tools this process knows. */
  names(): string[] {
    return Object.keys(this.factories);
  }

  has(name: string): boolean {
    return name in this.factories;
  }

  /** Whether the tool of that name runs the copies of a multihop path as one job (it has `submitPaths`). */
  runsPaths(name: string): boolean {
    return this.get(name)?.submitPaths !== undefined;
  }

  /** The tool of that name, made on first use; undefined for a tool this process does not know. */
  get(name: string): TransferTool | undefined {
    let tool = this.tools.get(name);
    if (!tool) {
      const factory = this.factories[name];
      if (!factory) return undefined;
      tool = factory(this.settings);
      this.tools.set(name, tool);
    }
    return tool;
  }

  async close(): Promise<void> {
    const tools = [...this.tools.values()];
    this.tools.clear();
    await Promise.all(tools.map((tool) => tool.close()));
  }
}

export const createTransferTools = (
  settings: TransferToolSettings,
  factories?: Readonly<Record<string, TransferToolFactory>>,
): TransferTools => new TransferTools(settings, factories);
