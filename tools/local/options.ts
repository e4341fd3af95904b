import { InvalidArgumentError } from 'commander';

/** A commander option parser for a number in [min, max] (an integer if `integer`), with a message that says which. */
export function numberIn(min: number, max: number, integer = false): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
      throw new InvalidArgumentError(`${integer ? 'an integer' : 'a number'} from ${min} to ${max}`);
    }
    return n;
  };
}
