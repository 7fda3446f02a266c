import { expect } from 'chai';
import { RuleNotFound } from '../../domain/rule/ruleErrors.ts';
import type { Skipped, WorkflowOutput } from '../../domain/shared/workflow.ts';
import { carryOut, refusalOf } from '../../workers/role.ts';

type Act = WorkflowOutput<'Act', { id: string }>;
const act = (id: string): Act => ({ type: 'Act', data: { id } });
const skip = (what: string, reason: string): Skipped => ({ type: 'Skipped', data: { what, reason } });

describe('Roles: what every role does with its outputs (workers/role.ts)', () => {
  describe('given a command that refuses', () => {
    it('reports the refusal with Rucio’s exception class and message', async () =>
      expect(
        await refusalOf(() => {
          throw new RuleNotFound('No replication rule found with ID r1');
        }),
      ).to.equal('RuleNotFound: No replication rule found with ID r1'));
  });

  describe('given an action that goes through', () => {
    it('reports no refusal', async () => expect(await refusalOf(async () => 'done')).to.equal(undefined));
  });

  describe('given an error that is not a refusal', () => {
    it('fails the job with it', async () => {
      const failure = await refusalOf(async () => {
        throw new Error('connection lost');
      }).catch((error: unknown) => error);
      expect(failure).to.be.instanceOf(Error).with.property('message', 'connection lost');
    });
  });

  describe('when carrying out a workflow’s outputs', () => {
    const outputs = [act('a'), skip('b', 'dry run'), act('c'), act('d')];
    const carried = (actOn: (id: string) => Promise<string | void>, inChunksOf?: number) =>
      carryOut<Act | Skipped>(
        outputs,
        (output) => output.data.id,
        (output) => actOn(output.data.id),
        inChunksOf,
      );

    it('counts what was done and reports the skipped outputs, what the commands left and what they refused', async () =>
      expect(
        await carried(async (id) => {
          if (id === 'c') return 'not stuck';
          if (id === 'd') throw new RuleNotFound('gone');
        }),
      ).to.deep.equal({
        done: 1,
        skipped: [
          { what: 'b', reason: 'dry run' },
          { what: 'c', reason: 'not stuck' },
          { what: 'd', reason: 'RuleNotFound: gone' },
        ],
      }));

    it('carries out one output after the other by default', async () => {
      const order: string[] = [];
      await carried(async (id) => {
        order.push(`start ${id}`);
        await new Promise((resolve) => setImmediate(resolve));
        order.push(`end ${id}`);
      });
      expect(order).to.deep.equal(['start a', 'end a', 'start c', 'end c', 'start d', 'end d']);
    });

    it('carries out a chunk at once when asked', async () => {
      const order: string[] = [];
      await carried(async (id) => {
        order.push(`start ${id}`);
        await new Promise((resolve) => setImmediate(resolve));
        order.push(`end ${id}`);
      }, 2);
      expect(order).to.deep.equal(['start a', 'start c', 'end a', 'end c', 'start d', 'end d']);
    });

    it('fails on an error that is not a refusal', async () => {
      const failure = await carried(async () => {
        throw new Error('connection lost');
      }).catch((error: unknown) => error);
      expect(failure).to.be.instanceOf(Error).with.property('message', 'connection lost');
    });
  });
});
