import { expect } from 'chai';
import { prettyLogLine } from '../../infra/prettyLog.ts';

const line = (entry: Record<string, unknown>) => JSON.stringify(entry);
const plain = { colours: false };

describe('Logs for people (DMS_LOG_FORMAT=pretty)', () => {
  it('shows the UTC time, the level, the message and the fields, without pid, host or name', () => {
    const text = prettyLogLine(
      line({
        level: 30,
        time: Date.UTC(2026, 10, 28, 15, 46, 30, 123),
        pid: 7,
        hostname: 'vm',
        name: 'dms',
        msg: 'projections running',
        projections: 23,
      }),
      plain,
    );
    expect(text).to.equal('15:46:30.123 INFO  projections running projections=23\n');
  });

  it('quotes a field with a space and writes objects as JSON', () => {
    const text = prettyLogLine(line({ level: 40, time: 0, msg: 'slow', what: 'a b', phases: { loading: 1 } }), plain);
    expect(text).to.equal('00:00:00.000 WARN  slow what="a b" phases={"loading":1}\n');
  });

  it('puts an error’s stack on the lines after its entry', () => {
    const text = prettyLogLine(
      line({
        level: 50,
        time: 0,
        msg: 'failed',
        err: { type: 'Error', message: 'boom', stack: 'Error: boom\n    at here' },
      }),
      plain,
    );
    expect(text).to.equal('00:00:00.000 ERROR failed\n    Error: boom\n        at here\n');
  });

  it('colours the level on a terminal', () => {
    expect(prettyLogLine(line({ level: 50, time: 0, msg: 'x' }), { colours: true })).to.include('\x1b[31mERROR\x1b[0m');
  });

  it('passes a line that is not JSON as it is', () => {
    expect(prettyLogLine('not json', plain)).to.equal('not json\n');
  });
});
