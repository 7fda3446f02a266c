import { expect } from 'chai';
import type { ConfigEvent } from '../../domain/config/config.ts';
import { configDecider } from '../../domain/config/configDecider.ts';
import { configValueFromText, configValueToText } from '../../domain/config/configValue.ts';
import { scopeDecider } from '../../domain/scope/scopeDecider.ts';
import { ConfigNotFound, Duplicate } from '../../domain/shared/errors.ts';
import { AT, deciderSpec, metadata } from '../support/deciderSpec.ts';

describe('scope decider', () => {
  const given = deciderSpec(scopeDecider);
  const add = { type: 'AddScope', data: { scope: 'user.jdoe', account: 'jdoe' }, metadata: metadata() } as const;

  it('adds a scope owned by an account', () =>
    given([])
      .when(add)
      .then([{ type: 'ScopeAdded', data: { scope: 'user.jdoe', account: 'jdoe', addedAt: AT } }]));

  it('refuses a scope that exists', () =>
    given([{ type: 'ScopeAdded', data: { scope: 'user.jdoe', account: 'root', addedAt: AT } }])
      .when(add)
      .thenThrows(Duplicate, /Scope 'user.jdoe' already exists!/));
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
