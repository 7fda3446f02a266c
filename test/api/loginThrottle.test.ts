import { expect } from 'chai';
import { LoginThrottle, type ThrottlePolicy } from '../../api/auth/loginThrottle.ts';

describe('login throttle', () => {
  const policy: ThrottlePolicy = { freeFailures: 2, baseDelayMs: 1000, maxDelayMs: 8000, windowMs: 60_000 };
  let now = 0;
  const throttle = () => new LoginThrottle(() => now);
  beforeEach(() => (now = 1_000_000));

  it('lets the free failures through, then doubles the delay with every further failure up to the largest', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((failures) => LoginThrottle.delayAfter(failures, policy))).to.deep.equal([
      0, 0, 1000, 2000, 4000, 8000, 8000,
    ]);
  });

  it('makes an attempt wait for its turn after too many failures of its identity', () => {
    const subject = throttle();
    subject.failed(['id'], policy);
    expect(subject.admit(['id'], policy)).to.deep.equal({ refused: false, waitMs: 0 });
    subject.failed(['id'], policy);
    expect(subject.admit(['id'], policy)).to.deep.equal({ refused: false, waitMs: 1000 });
  });

  it('spaces attempts made together, and refuses those whose turn is further off than the largest delay', () => {
    const subject = throttle();
    for (let failure = 0; failure < 5; failure += 1) subject.failed(['id'], policy);
    // Four failures past the free ones: 8 s between attempts, which is the largest wait.
    expect(subject.admit(['id'], policy)).to.deep.equal({ refused: false, waitMs: 8000 });
    const second = subject.admit(['id'], policy);
    expect(second.refused).to.equal(true);
    now += 8000;
    expect(subject.admit(['id'], policy)).to.deep.equal({ refused: false, waitMs: 8000 });
  });

  it('waits for the slowest of its keys (the identity or the address)', () => {
    const subject = throttle();
    for (let failure = 0; failure < 3; failure += 1) subject.failed([`user${failure}`, 'address'], policy);
    expect(subject.admit(['fresh-user', 'address'], policy)).to.deep.equal({ refused: false, waitMs: 2000 });
  });

  it('forgets a success, and failures a window after the last one', () => {
    const subject = throttle();
    subject.failed(['id', 'address'], policy);
    subject.failed(['id', 'address'], policy);
    subject.succeeded('id');
    expect(subject.admit(['id'], policy)).to.deep.equal({ refused: false, waitMs: 0 });
    now += 60_000;
    expect(subject.admit(['address'], policy)).to.deep.equal({ refused: false, waitMs: 0 });
  });
});
