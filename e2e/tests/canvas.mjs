// The timeline canvas names the centre of its largest box in user units (1000 across, the
// picture's width; timeline.rs `Scene::largest`): where on the page that is, in CSS px.
export async function largestBox(canvas) {
  return canvas.evaluate((el) => {
    const [x, y] = el.dataset.largest.split(',').map(Number);
    const b = el.getBoundingClientRect();
    return { x: b.x + (x / 1000) * b.width, y: b.y + (y / 1000) * b.width };
  });
}
