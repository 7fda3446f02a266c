import { reconciler } from '../../domain/reconcile/reconciler.ts';
import { workflowSpec } from '../support/workflowSpec.ts';

const now = '2026-11-22T10:00:00.000Z';
const longAgo = '2026-11-22T09:58:00.000Z';
const justNow = '2026-11-22T09:59:30.000Z';

describe('Workflow: the reconciler (issue 34)', () => {
  const given = workflowSpec(reconciler);
  const nothingNew = { newDids: [] };
  const noRule = { injecting: [] };
  const injecting = (updatedAt: string, injectAfter: string | null = null) => ({
    ruleId: 'r1',
    updatedAt,
    injectAfter,
    position: 42,
  });

  it('gives a rule left in INJECT past the grace its injection again', () =>
    given({ injecting: [injecting(longAgo)], ...nothingNew })
      .when({ now, graceSeconds: 60 })
      .then([{ type: 'EnqueueInjection', data: { ruleId: 'r1', position: 42 } }]));
  it('leaves a rule in INJECT within the grace to the job it has', () =>
    given({ injecting: [injecting(justNow)], ...nothingNew })
      .when({ now, graceSeconds: 60 })
      .thenNothing());
  it('leaves a delayed injection to its time', () =>
    given({ injecting: [injecting(longAgo, '2026-11-22T11:00:00.000Z')], ...nothingNew })
      .when({ now, graceSeconds: 60 })
      .thenNothing());
  it('injects a delayed rule whose time has come', () =>
    given({ injecting: [injecting(longAgo, longAgo)], ...nothingNew })
      .when({ now, graceSeconds: 60 })
      .then([{ type: 'EnqueueInjection', data: { ruleId: 'r1', position: 42 } }]));
  it('gives a dataset still flagged new past the grace to the transmogrifier again', () =>
    given({
      ...noRule,
      newDids: [
        { scope: 's', name: 'ds', didType: 'DATASET', createdAt: longAgo, position: 7 },
        { scope: 's', name: 'fresh', didType: 'CONTAINER', createdAt: justNow, position: 8 },
      ],
    })
      .when({ now, graceSeconds: 60 })
      .then([
        { type: 'EnqueueTransmogrification', data: { scope: 's', name: 'ds', didType: 'DATASET', position: 7 } },
      ]));
  it('never hands a file to the transmogrifier', () =>
    given({ ...noRule, newDids: [{ scope: 's', name: 'f', didType: 'FILE', createdAt: longAgo, position: 1 }] })
      .when({ now, graceSeconds: 60 })
      .thenNothing());
});
