// Steps on the playground page that many specs share.

// Types dynamic-batch gears (e.g. '1,2') into the model form and commits them, as a user's
// Enter or leaving the field does (the field acts on change, not on every key).
export async function setGears(page, gears) {
  const field = page.getByTestId('gears');
  await field.fill(gears);
  await field.dispatchEvent('change');
}
