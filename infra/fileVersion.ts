import { statSync } from 'node:fs';

/** What identifies a file's version without reading it ('missing' when it is not there): a change means read it again. */
export const fileVersionOf = (path: string): string => {
  try {
    const stat = statSync(path);
    return `${stat.mtimeMs} ${stat.size} ${stat.ino}`;
  } catch {
    return 'missing';
  }
};
