import { expect } from 'chai';
import { LoginThrottle, type ThrottlePolicy } from '../../api/auth/loginThrottle.ts';
import { ManualClock } from '../support/clock.ts';

describe('login throttle', () => {
  const policy: ThrottlePolicy = {
    freeFailures: 2,
    identityFreeFailures: 4,
    addressFreeIdentities: 3,
    baseDelayMs: 1000,
    maxDelayMs: 8000,
    windowMs: 60_000,
  };
  let clock = new ManualClock();
  const throttle = () => new LoginThrottle(clock);
  const jdoe = { identity: 'USERPASS jdoe', address: '10.0.0.1' };
  const root = { identity: 'USERPASS root', address: '10.0.0.1' };
  const fail = (subject: LoginThrottle, attempt: typeof jdoe, times: number) => {
    for (let failure = 0; failure < times; failure += 1) subject.failed(attempt, policy);
  };
  beforeEach(() => (clock = new ManualClock({ at: 1_000_000 })));

  it('lets the free failures through, then doubles the delay with every further failure up to the largest', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((failures) => LoginThrottle.delayAfter(failures, 2, policy))).to.deep.equal([
      0, 0, 1000, 2000, 4000, 8000, 8000,
    ]);
  });

  it('makes an attempt wait for its turn after too many failures of its identity from its address', () => {
    const subject = throttle();
    subject.failed(jdoe, policy);
    expect(subject.admit(jdoe, policy)).to.deep.equal({ refused: false, waitMs: 0 });
    subject.failed(jdoe, policy);
    expect(subject.admit(jdoe, policy)).to.deep.equal({ refused: false, waitMs: 1000 });
  });

  it('spaces attempts made together, and refuses those whose turn is further off than the largest delay', () => {
    const subject = throttle();
    fail(subject, jdoe, 5);
    // Three failures past the free ones from this address: 8 s between attempts, the largest wait.
    expect(subject.admit(jdoe, policy)).to.deep.equal({ refused: false, waitMs: 8000 });
    expect(subject.admit(jdoe, policy).refused).to.equal(true);
    clock.advance(8000);
    expect(subject.admit(jdoe, policy)).to.deep.equal({ refused: false, waitMs: 8000 });
  });

  it("never slows down another identity from the same address for one identity's failures", () => {
    const subject = throttle();
    fail(subject, jdoe, 50);
    expect(subject.admit(jdoe, policy)).to.deep.equal({ refused: false, waitMs: 8000 });
    expect(subject.admit(jdoe, policy).refused).to.equal(true);
    expect(subject.admit(root, policy)).to.deep.equal({ refused: false, waitMs: 0 });
  });

  it('slows down an identity failing from many addresses, everywhere', () => {
    const subject = throttle();
    for (let address = 0; address < 4; address += 1) subject.failed({ ...jdoe, address: `10.0.1.${address}` }, policy);
    expect(subject.admit({ ...jdoe, address: '10.0.2.1' }, policy)).to.deep.equal({ refused: false, waitMs: 1000 });
    expect(subject.admit({ ...root, address: '10.0.2.1' }, policy)).to.deep.equal({ refused: false, waitMs: 0 });
  });

  it('slows down every attempt from an address once enough distinct identities failed from it', () => {
    const subject = throttle();
    for (let user = 0; user < 2; user += 1) fail(subject, { ...jdoe, identity: `USERPASS user${user}` }, 1);
    expect(subject.admit(root, policy)).to.deep.equal({ refused: false, waitMs: 0 });
    subject.failed({ ...jdoe, identity: 'USERPASS user2' }, policy);
    expect(subject.admit(root, policy)).to.deep.equal({ refused: false, waitMs: 1000 });
    expect(subject.admit({ ...root, address: '10.0.0.2' }, policy)).to.deep.equal({ refused: false, waitMs: 0 });
  });

  it('forgets a success, and failures a window after the last one', () => {
    const subject = throttle();
    fail(subject, jdoe, 2);
    for (let user = 0; user < 2; user += 1) subject.failed({ ...jdoe, identity: `USERPASS user${user}` }, policy);
    subject.succeeded(jdoe);
    // jdoe's failures are gone from its counts and from its address's identities (two left of three).
    expect(subject.admit(jdoe, policy)).to.deep.equal({ refused: false, waitMs: 0 });
    subject.failed({ ...jdoe, identity: 'USERPASS user2' }, policy);
    expect(subject.admit(root, policy).refused).to.equal(false);
    clock.advance(60_000);
    expect(subject.admit(root, policy)).to.deep.equal({ refused: false, waitMs: 0 });
  });

  it('counts a right password to a foreign account against the address only', () => {
    const subject = throttle();
    for (let time = 0; time < 5; time += 1) subject.failed(jdoe, policy, false);
    expect(subject.admit(jdoe, policy)).to.deep.equal({ refused: false, waitMs: 0 });
  });
});
