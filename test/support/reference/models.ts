/** The models each suite draws: random ones with a share of the defect shapes among them. */
import fc from 'fast-check';
import { defectItemsShape, defectOneShape } from './defects';
import { randomShape } from './generate';
import type { Shape } from './shapes';
import { storeBlocks } from './store-blocks';

/** Random models, and a share of defect-1 shapes among them. */
export function modelShape(depth = 3): fc.Arbitrary<Shape> {
  return fc.oneof({ arbitrary: randomShape(depth), weight: 9 }, { arbitrary: defectOneShape(), weight: 1 });
}

/** For the store: random models with call and multi-instance activities among their blocks, and the shapes of defects 2 and 7. */
export function storeModelShape(depth = 2): fc.Arbitrary<Shape> {
  return fc.oneof(
    { arbitrary: randomShape(depth, storeBlocks), weight: 6 },
    { arbitrary: defectItemsShape(), weight: 1 },
  );
}
