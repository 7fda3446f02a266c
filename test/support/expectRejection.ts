import { expect } from 'chai';

/** Awaits a promise that must fail with an error of the given class, and returns that error. */
export const expectRejection = async <T extends Error>(
  promise: Promise<unknown>,
  errorClass: new (...args: never[]) => T,
): Promise<T> => {
  let failure: unknown;
  try {
    await promise;
  } catch (error) {
    failure = error;
  }
  expect(failure, 'the promise should have been rejected').to.be.instanceOf(errorClass);
  return failure as T;
};
