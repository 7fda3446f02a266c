import { expect } from 'chai';
import type { Workflow, WorkflowOutput } from '../../domain/shared/workflow.ts';

/** given(facts).when(input).then(outputs), for the daemons' workflows: pure, like deciders. */
export const workflowSpec =
  <Input, Facts, Output extends WorkflowOutput>(workflow: Workflow<Input, Facts, Output>) =>
  (facts: Facts) => ({
    when: (input: Input) => ({
      then: (expected: Output[]) => expect(workflow.decide(input, facts)).to.deep.equal(expected),
      thenNothing: () => expect(workflow.decide(input, facts)).to.deep.equal([]),
    }),
  });
