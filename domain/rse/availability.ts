import { InvalidObject } from '../shared/errors.ts';

type AvailabilityFlags = Readonly<{
  availability_read: boolean;
  availability_write: boolean;
  availability_delete: boolean;
}>;

/** Rucio's deprecated availability bitmask: read 4, write 2, delete 1 (common/utils.py Availability). */
export const availabilityInteger = (flags: AvailabilityFlags): number =>
  (flags.availability_read ? 4 : 0) + (flags.availability_write ? 2 : 0) + (flags.availability_delete ? 1 : 0);

/** The flags a bitmask stands for; anything but an integer from 0 to 7 is refused. */
export const availabilityFlags = (value: unknown): AvailabilityFlags => {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > 7) {
    throw new InvalidObject(`Problem validating availability: ${JSON.stringify(value)} is not an integer from 0 to 7`);
  }
  return {
    availability_read: (value & 4) !== 0,
    availability_write: (value & 2) !== 0,
    availability_delete: (value & 1) !== 0,
  };
};
