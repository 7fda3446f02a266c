import { expect } from 'chai';
import type { ConfigEvent } from '../../domain/config/config.ts';
import { configDecider } from '../../domain/config/configDecider.ts';
import { configValueFromText, configValueToText } from '../../domain/config/configValue.ts';
import { scopeDecider } from '../../domain/scope/scopeDecider.ts';
import { ConfigNotFound, ConfigurationError, Duplicate, InvalidObject } from '../../domain/shared/errors.ts';
import { nameSchemaOf } from '../../domain/shared/names.ts';
import { settingValue, SETTINGS } from '../../domain/config/settings.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

describe('scope decider', () => {
  const given = deciderSpec(scopeDecider);
  const addOf = (scope: string) =>
    ({
      type: 'AddScope',
      data: { scope, account: 'jdoe', nameSchema: nameSchemaOf('generic') },
      metadata: metadata(),
    }) as const;
  const add = addOf('user.jdoe');

  it('adds a scope owned by an account', () =>
    given([])
      .when(add)
      .then([{ type: 'ScopeAdded', data: { scope: 'user.jdoe', account: 'jdoe', addedAt: AT } }]));

  it('refuses a scope that exists', () =>
    given([{ type: 'ScopeAdded', data: { scope: 'user.jdoe', account: 'root', addedAt: AT } }])
      .when(add)
      .thenThrows(Duplicate, /Scope 'user.jdoe' already exists!/));

  for (const scope of ['..', '.', 'user..jdoe', 'group.'])
    it(`refuses the scope ${JSON.stringify(scope)}: as a path it would climb out of an RSE's prefix`, () =>
      given([])
        .when(addOf(scope))
        .thenThrows(InvalidObject, /^Problem validating scope: .*path segment/));

  it('refuses a scope the schema does not match', () =>
    given([])
      .when(addOf('a/b'))
      .thenThrows(InvalidObject, /^Problem validating scope: 'a\/b' does not match/));

  it('takes dots inside a scope (`...` is one directory, `user.a.b` three)', () =>
    given([])
      .when(addOf('...'))
      .then([{ type: 'ScopeAdded', data: { scope: '...', account: 'jdoe', addedAt: AT } }]));
});

describe('config decider', () => {
  const given = deciderSpec(configDecider);
  const set = (section: string, option: string, value: string): ConfigEvent => ({
    type: 'ConfigOptionSet',
    data: { section, option, value },
  });

  it('sets options and skips those that already hold the value', () =>
    given([set('core', 'a', '1')])
      .when({
        type: 'SetConfigOptions',
        data: {
          options: [
            { section: 'core', option: 'a', value: '1' },
            { section: 'core', option: 'b', value: 'x' },
          ],
        },
        metadata: metadata(),
      })
      .then([set('core', 'b', 'x')]));

  describe("when a value is out of a read option's declared range", () => {
    const setting = (section: string, option: string, value: string) =>
      ({
        type: 'SetConfigOptions',
        data: {
          options: [
            { section: 'core', option: 'a', value: '1' },
            { section, option, value },
          ],
        },
        metadata: metadata(),
      }) as const;
    it('refuses a count above its range, naming the range, and writes nothing', () =>
      given([])
        .when(setting('auth', 'login_free_failures', '100000'))
        .thenThrows(ConfigurationError, /from 0 to 1000/));
    it('refuses a fraction where a whole number is read', () =>
      given([])
        .when(setting('auth', 'login_free_failures', '2.5'))
        .thenThrows(ConfigurationError, /a whole number/));
    it('refuses a number that is not finite', () =>
      given([])
        .when(setting('auth', 'login_delay_max', '1e400'))
        .thenThrows(ConfigurationError, /a number from 0/));
    it('refuses a boolean that is neither True nor False', () =>
      given([])
        .when(setting('reaper', 'greedy', 'perhaps'))
        .thenThrows(ConfigurationError, /True or False/));
    it('refuses a choice not offered', () =>
      given([])
        .when(setting('policy', 'lfn2pfn_algorithm_default', 'md5'))
        .thenThrows(ConfigurationError, /hash, identity/));
    it('refuses a date that does not exist', () =>
      given([])
        .when(setting('lifetime_model', 'cutoff_date', '2026-02-30'))
        .thenThrows(ConfigurationError, /YYYY-MM-DD/));
    it('refuses a policy whose pattern needs backtracking', () =>
      given([])
        .when(setting('suspicious-replica-recoverer', 'policy', '[{"scope": ["(?=x)"], "action": "ignore"}]'))
        .thenThrows(ConfigurationError, /JSON list/));
    it('takes a count within its range', () =>
      given([])
        .when(setting('auth', 'login_free_failures', '10'))
        .then([set('core', 'a', '1'), set('auth', 'login_free_failures', '10')]));
    it('takes an empty date, which means none', () =>
      given([])
        .when(setting('lifetime_model', 'cutoff_date', ''))
        .then([set('core', 'a', '1'), set('lifetime_model', 'cutoff_date', '')]));
  });

  describe('when a setting is read', () => {
    it('reads a whole number as declared', () =>
      expect(settingValue({ auth: { login_free_failures: '10' } }, SETTINGS.loginFreeFailures)).to.equal(10));
    it('reads the default for what is not set', () => expect(settingValue({}, SETTINGS.loginFreeFailures)).to.equal(5));
    it('reads the default for what no longer fits', () =>
      expect(settingValue({ auth: { login_free_failures: '100000' } }, SETTINGS.loginFreeFailures)).to.equal(5));
    it('reads a list of patterns', () =>
      expect(
        settingValue({ conveyor: { suspicious_pattern: ' a.* , b ' } }, SETTINGS.conveyorSuspiciousPattern),
      ).to.deep.equal(['a.*', 'b']));
    it("reads the recoverer's policy", () =>
      expect(
        settingValue(
          { 'suspicious-replica-recoverer': { policy: '[{"datatype": ["RAW"], "action": "declare bad"}]' } },
          SETTINGS.recovererPolicy,
        ),
      ).to.deep.equal([{ scope: [], datatype: ['RAW'], action: 'declare bad' }]));
  });

  describe('when options and sections are removed', () => {
    it('removes an option', () =>
      given([set('core', 'a', '1')])
        .when({ type: 'RemoveConfigOption', data: { section: 'core', option: 'a' }, metadata: metadata() })
        .then([{ type: 'ConfigOptionRemoved', data: { section: 'core', option: 'a' } }]));
    it('refuses a section left without options', () =>
      given([set('core', 'a', '1'), { type: 'ConfigOptionRemoved', data: { section: 'core', option: 'a' } }])
        .when({ type: 'RemoveConfigSection', data: { section: 'core' }, metadata: metadata() })
        .thenThrows(ConfigNotFound, /No configuration found for section 'core'/));
    it('refuses a missing option', () =>
      given([])
        .when({ type: 'RemoveConfigOption', data: { section: 'core', option: 'a' }, metadata: metadata() })
        .thenThrows(ConfigNotFound, /option 'a'/));
    it('removes a section', () =>
      given([set('core', 'a', '1')])
        .when({ type: 'RemoveConfigSection', data: { section: 'core' }, metadata: metadata() })
        .then([{ type: 'ConfigSectionRemoved', data: { section: 'core' } }]));
  });

  it('stores values as text and types them again like Rucio', () => {
    expect(configValueToText(true)).to.equal('True');
    expect(configValueToText(12)).to.equal('12');
    expect(configValueFromText('True')).to.equal(true);
    expect(configValueFromText('off')).to.equal(false);
    expect(configValueFromText('42')).to.equal(42);
    expect(configValueFromText('1.5')).to.equal(1.5);
    expect(configValueFromText('abc')).to.equal('abc');
  });
});
