import { expect } from 'chai';
import { StartupPhases } from '../../infra/startupPhases.ts';

describe('Start-up phases', () => {
  it('times each phase from the mark before, the first from the process start, in order', () => {
    const phases = new StartupPhases();
    phases.mark('stores');
    phases.mark('listening');
    const durations = phases.durations();
    expect(Object.keys(durations)).to.deep.equal(['loading', 'stores', 'listening', 'total']);
    const sum = durations.loading! + durations.stores! + durations.listening!;
    expect(Math.abs(sum - durations.total!)).to.be.below(0.5);
    expect(durations.loading).to.be.above(0);
  });
});
