import { expect } from 'chai';
import { clock, grouped, Progress } from '../../bin/commands/progress.ts';

/** A fake stderr and clock: what a command would print, and when. */
const output = (isTTY: boolean) => {
  const written: string[] = [];
  return { isTTY, columns: 120, write: (text: string) => written.push(text), written };
};

describe('Progress on stderr', () => {
  it('redraws one bar in place on a terminal, with the rate and the time left', () => {
    let now = 0;
    const tty = output(true);
    const progress = new Progress('verify', 'events', tty, 5000, () => now);
    now = 1000;
    progress.update(1000, 0.25);
    now = 1050;
    progress.update(1100, 0.27);
    now = 2000;
    progress.update(2000, 0.5);
    progress.finish();
    expect(tty.written).to.have.length(4);
    expect(tty.written[0]).to.equal('\rverify  [#####...............]   25%  1 000 events  1 000 events/s  ETA 0:03');
    expect(tty.written[1]).to.match(
      /^\rverify {2}\[##########\.{10}\] {3}50% {2}2 000 events {2}1 000 events\/s {2}ETA 0:02/,
    );
    expect(tty.written[3]).to.equal('\n');
  });

  it('prints plain lines every few seconds elsewhere, and a last one at the end', () => {
    let now = 0;
    const log = output(false);
    const progress = new Progress('import', 'events', log, 5000, () => now);
    for (let second = 1; second <= 12; second += 1) {
      now = second * 1000;
      progress.update(now * 10);
    }
    progress.finish();
    expect(log.written).to.deep.equal([
      'import  50 000 events  10 000 events/s  in 0:05\n',
      'import  100 000 events  10 000 events/s  in 0:10\n',
      'import  120 000 events  10 000 events/s  in 0:12\n',
    ]);
  });

  it('prints the final line once elsewhere, when the last periodic line already showed the end', () => {
    let now = 1_795_000_000_000;
    const log = output(false);
    const progress = new Progress('verify', 'events', log, 5000, () => now);
    now += 10;
    progress.update(500, 1);
    progress.finish();
    expect(log.written).to.deep.equal(['verify  100%  500 events  50 000 events/s  in 0:00\n']);

    const slow = output(false);
    const export_ = new Progress('export', 'events', slow, 5000, () => now);
    now += 5000;
    export_.update(800, 1);
    now += 2000;
    export_.finish();
    expect(slow.written).to.deep.equal(['export  100%  800 events  160 events/s  in 0:05\n']);
  });

  it('does not draw on a terminal before the first tenth of a second', () => {
    let now = 1_795_000_000_000;
    const tty = output(true);
    const progress = new Progress('verify', 'events', tty, 5000, () => now);
    now += 50;
    progress.update(10, 0.1);
    expect(tty.written).to.deep.equal([]);
    progress.finish();
    expect(tty.written).to.have.length(2);
    expect(tty.written[1]).to.equal('\n');
  });

  it('groups digits and writes durations as a clock', () => {
    expect(grouped(1234567)).to.equal('1 234 567');
    expect(clock(65)).to.equal('1:05');
    expect(clock(3725)).to.equal('1:02:05');
  });
});
