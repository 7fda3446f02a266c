import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const tempDir = (): { path: string; dispose(): void } => {
  const path = mkdtempSync(join(tmpdir(), 'dms-bench-'));
  return { path, dispose: () => rmSync(path, { recursive: true, force: true }) };
};
