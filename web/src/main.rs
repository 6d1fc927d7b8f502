//! memplan playground (stub until the playground lands).
use yew::prelude::*;

#[function_component(App)]
fn app() -> Html {
    let p =
        memplan_core::Problem::from_buffers("demo", vec![memplan_core::Buffer::new("a", 4, 0, 1)]);
    let peak = memplan_core::plan(&p, "no-reuse", &memplan_core::PlanOptions::exact())
        .map(|p| p.peak)
        .unwrap_or(0);
    html! { <main><h1>{ "memplan" }</h1><p>{ format!("peak {peak} B") }</p></main> }
}

fn main() {
    yew::Renderer::<App>::new().render();
}
