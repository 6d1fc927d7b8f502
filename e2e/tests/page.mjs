// Steps on the playground page that many specs share.
import { expect } from '@playwright/test';

// Types dynamic-batch gears (e.g. '1,2') into the model form and commits them, as a user's
// Enter or leaving the field does (the field acts on change, not on every key).
export async function setGears(page, gears) {
  const field = page.getByTestId('gears');
  await field.fill(gears);
  await field.dispatchEvent('change');
}

// A graph opens with GE's runtime allocator in pane 2 (settings.rs, Rules::why); the tests
// that hold the page's two static plans against `memplan plan --strategy ge-block --strategy
// greedy-size-best-fit` choose that packing in pane 2 first (it then stays, as a choice).
export async function packSecondPane(page) {
  await page.getByTestId('pane1-strategy').selectOption('greedy-size-best-fit');
  await expect(page.getByTestId('pane1-strategy')).toHaveValue('greedy-size-best-fit');
}
