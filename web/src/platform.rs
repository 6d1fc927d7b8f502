//! The one thin layer that touches the browser: URL, files, fetch, downloads, clipboard,
//! keyboard, theme, messages to the embedding page, and the crash screen. Nothing else in the
//! crate calls `web_sys`.

use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

fn window() -> Option<web_sys::Window> {
    web_sys::window()
}

fn js_err(e: JsValue) -> String {
    e.as_string()
        .or_else(|| {
            e.dyn_ref::<js_sys::Error>()
                .map(|e| String::from(e.message()))
        })
        .unwrap_or_else(|| "unknown browser error".to_string())
}

/// Milliseconds from a monotonic clock (`performance.now()`).
pub fn now_ms() -> f64 {
    window()
        .and_then(|w| w.performance())
        .map_or(0.0, |p| p.now())
}

/// The fragment without `#`.
pub fn hash() -> String {
    window()
        .and_then(|w| w.location().hash().ok())
        .map(|h| h.trim_start_matches('#').to_string())
        .unwrap_or_default()
}

/// Replaces the fragment without adding a history entry or firing `hashchange`.
pub fn replace_hash(fragment: &str) {
    if let Some(w) = window() {
        if let Ok(h) = w.history() {
            let url = format!("{}#{fragment}", page_url(false));
            let _ = h.replace_state_with_url(&JsValue::NULL, "", Some(&url));
        }
    }
}

/// Sets the fragment as a new history entry (Back returns to the previous one), without
/// firing `hashchange`.
pub fn push_hash(fragment: &str) {
    if let Some(w) = window() {
        if let Ok(h) = w.history() {
            let url = format!("{}#{fragment}", page_url(false));
            let _ = h.push_state_with_url(&JsValue::NULL, "", Some(&url));
        }
    }
}

/// Calls `f` once after `ms` milliseconds, unless the handle is dropped first.
pub fn after(ms: u32, f: impl FnOnce() + 'static) -> gloo_timers::callback::Timeout {
    gloo_timers::callback::Timeout::new(ms, f)
}

/// Runs `f` once the next frame has been painted (a frame callback, then a task): for the part
/// of an answer to an interaction that its first paint need not wait for.
pub fn after_paint(f: impl FnOnce() + 'static) {
    let f = std::rc::Rc::new(std::cell::RefCell::new(Some(f)));
    let g = f.clone();
    let cb = Closure::once_into_js(move || {
        if let Some(f) = g.borrow_mut().take() {
            gloo_timers::callback::Timeout::new(0, f).forget();
        }
    });
    let asked = window().is_some_and(|w| w.request_animation_frame(cb.unchecked_ref()).is_ok());
    if !asked {
        if let Some(f) = f.borrow_mut().take() {
            f();
        }
    }
}

/// A query parameter of the page URL.
pub fn query(name: &str) -> Option<String> {
    let href = window()?.location().href().ok()?;
    let url = web_sys::Url::new(&href).ok()?;
    url.search_params().get(name)
}

/// The page URL without fragment; without the query too unless `keep_query`.
pub fn page_url(keep_query: bool) -> String {
    let Some(w) = window() else {
        return String::new();
    };
    let l = w.location();
    let base = format!(
        "{}{}",
        l.origin().unwrap_or_default(),
        l.pathname().unwrap_or_default()
    );
    if keep_query {
        format!("{base}{}", l.search().unwrap_or_default())
    } else {
        base
    }
}

/// Fetches a URL's bytes, refusing bodies over the playground's file limit.
///
/// # Errors
/// A sentence: network/CORS failure, HTTP status, or size.
pub async fn fetch_bytes(url: &str) -> Result<Vec<u8>, String> {
    let w = window().ok_or("no window")?;
    let resp = JsFuture::from(w.fetch_with_str(url)).await.map_err(|e| {
        format!(
            "could not fetch {url}: {} (the server may not allow cross-origin requests: CORS)",
            js_err(e)
        )
    })?;
    let resp: web_sys::Response = resp.dyn_into().map_err(js_err)?;
    if !resp.ok() {
        return Err(format!("could not fetch {url}: HTTP {}", resp.status()));
    }
    if let Ok(Some(len)) = resp.headers().get("content-length") {
        if let Ok(n) = len.parse::<u64>() {
            crate::model::check_size(url, n)?;
        }
    }
    let buf = JsFuture::from(resp.array_buffer().map_err(js_err)?)
        .await
        .map_err(|e| format!("could not read {url}: {}", js_err(e)))?;
    Ok(js_sys::Uint8Array::new(&buf).to_vec())
}

/// Reads a local file (picker or drop) after checking its size. Nothing leaves the browser.
///
/// # Errors
/// Too large, or the browser could not read it.
pub async fn read_file(file: web_sys::File) -> Result<(String, Vec<u8>), String> {
    let name = file.name();
    // File sizes are whole numbers far below 2^53: the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    let size = file.size() as u64;
    crate::model::check_size(&name, size)?;
    let bytes = gloo_file::futures::read_as_bytes(&gloo_file::File::from(file))
        .await
        .map_err(|e| format!("could not read '{name}': {e}"))?;
    Ok((name, bytes))
}

/// A file the user picked or dropped (read with [`read_file`]).
pub type File = web_sys::File;

/// A pending one-shot timer ([`after`]); dropping it cancels it.
pub type Timeout = gloo_timers::callback::Timeout;

/// A repeating timer ([`every`]); dropping it stops it.
pub type Interval = gloo_timers::callback::Interval;

/// The first file of a file input's change event.
pub fn input_file(e: &web_sys::Event) -> Option<web_sys::File> {
    let input: web_sys::HtmlInputElement = e.target()?.dyn_into().ok()?;
    let f = input.files()?.get(0);
    input.set_value("");
    f
}

/// The first file of a drop event.
pub fn dropped_file(e: &web_sys::DragEvent) -> Option<web_sys::File> {
    e.data_transfer()?.files()?.get(0)
}

/// Saves an SVG rendered to PNG (at `scale` × its `width` × `height`) as a download called
/// `name`: the SVG is drawn on a canvas once it has loaded as an image.
pub fn download_png(name: &str, svg: &str, width: f64, height: f64, scale: f64) {
    use base64::Engine;
    let Some(doc) = window().and_then(|w| w.document()) else {
        return;
    };
    let Ok(img) = web_sys::HtmlImageElement::new() else {
        return;
    };
    let b64 = base64::engine::general_purpose::STANDARD.encode(svg.as_bytes());
    let name = name.to_string();
    let img2 = img.clone();
    let onload = Closure::once(move || {
        let Ok(canvas) = doc
            .create_element("canvas")
            .map(|c| c.unchecked_into::<web_sys::HtmlCanvasElement>())
        else {
            return;
        };
        // Canvas sizes are whole pixels; the plot is a few thousand at most.
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let (w, h) = (
            (width * scale).ceil() as u32,
            (height * scale).ceil() as u32,
        );
        canvas.set_width(w);
        canvas.set_height(h);
        let Some(ctx) = canvas
            .get_context("2d")
            .ok()
            .flatten()
            .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
        else {
            return;
        };
        let _ = ctx.draw_image_with_html_image_element_and_dw_and_dh(
            &img2,
            0.0,
            0.0,
            f64::from(w),
            f64::from(h),
        );
        if let Ok(url) = canvas.to_data_url_with_type("image/png") {
            if let Ok(a) = doc.create_element("a") {
                if let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>() {
                    a.set_href(&url);
                    a.set_download(&name);
                    a.click();
                }
            }
        }
    });
    img.set_onload(Some(onload.as_ref().unchecked_ref()));
    onload.forget();
    img.set_src(&format!("data:image/svg+xml;base64,{b64}"));
}

/// Saves `bytes` as a download called `name` (a binary file: a planned `.tflite`).
pub fn download_bytes(name: &str, mime: &str, bytes: &[u8]) {
    let array = js_sys::Uint8Array::from(bytes);
    let parts = js_sys::Array::of1(&array);
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_u8_array_sequence_and_options(&parts, &opts) else {
        return;
    };
    save_blob(name, &blob);
}

/// Saves `text` as a download called `name`.
pub fn download(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    save_blob(name, &blob);
}

/// Saves `blob` as a download called `name` (through a temporary object URL).
fn save_blob(name: &str, blob: &web_sys::Blob) {
    let Ok(url) = web_sys::Url::create_object_url_with_blob(blob) else {
        return;
    };
    if let Some(doc) = window().and_then(|w| w.document()) {
        if let Ok(a) = doc.create_element("a") {
            if let Ok(a) = a.dyn_into::<web_sys::HtmlAnchorElement>() {
                a.set_href(&url);
                a.set_download(name);
                a.click();
            }
        }
    }
    let _ = web_sys::Url::revoke_object_url(&url);
}

/// Copies text to the clipboard.
///
/// # Errors
/// When the browser refuses (no permission, insecure context).
pub async fn copy_text(text: &str) -> Result<(), String> {
    let w = window().ok_or("no window")?;
    let p = w.navigator().clipboard().write_text(text);
    JsFuture::from(p).await.map(|_| ()).map_err(js_err)
}

/// Posts the page height to the embedding page: `{type: "memplan:height", height}`.
pub fn post_height() {
    let Some(w) = window() else { return };
    let Some(h) = w
        .document()
        .and_then(|d| d.document_element())
        .map(|e| e.scroll_height())
    else {
        return;
    };
    post_to_host("memplan:height", &[("height", JsValue::from(h))]);
}

/// Posts `{type, ...fields}` to the embedding page, if there is one (an iframe's parent).
pub fn post_to_host(kind: &str, fields: &[(&str, JsValue)]) {
    let Some(w) = window() else { return };
    let Ok(Some(parent)) = w.parent() else { return };
    if parent == w {
        return;
    }
    let msg = js_sys::Object::new();
    let _ = js_sys::Reflect::set(&msg, &"type".into(), &kind.into());
    for (k, v) in fields {
        let _ = js_sys::Reflect::set(&msg, &(*k).into(), v);
    }
    let _ = parent.post_message(&msg, "*");
}

/// Longest model name a host page may give, characters.
pub const MAX_HOSTED_NAME: usize = 256;

/// Calls `f(name, bytes)` when the embedding page hands over a model:
/// `postMessage({type: "memplan:model", name: "m.onnx", bytes: ArrayBuffer | Uint8Array})`
/// or `{..., text: "..."}` for JSON and CSV. Other messages are ignored; a name that is not a
/// string (or too long) becomes `model`. The bytes are parsed like a file the user opened
/// (same size cap, same errors).
pub fn on_hosted_model(f: impl Fn(String, Result<Vec<u8>, String>) + 'static) {
    let Some(w) = window() else { return };
    let listener = gloo_events::EventListener::new(&w, "message", move |e| {
        let Some(e) = e.dyn_ref::<web_sys::MessageEvent>() else {
            return;
        };
        let data = e.data();
        let get = |k: &str| js_sys::Reflect::get(&data, &k.into()).unwrap_or(JsValue::UNDEFINED);
        if !data.is_object() || get("type").as_string().as_deref() != Some("memplan:model") {
            return;
        }
        let name = get("name")
            .as_string()
            .filter(|n| !n.is_empty() && n.chars().count() <= MAX_HOSTED_NAME)
            .unwrap_or_else(|| "model".to_string());
        let bytes = get("bytes");
        let view = if bytes.is_instance_of::<js_sys::ArrayBuffer>() {
            Some(js_sys::Uint8Array::new(&bytes))
        } else if bytes.is_instance_of::<js_sys::Uint8Array>() {
            Some(js_sys::Uint8Array::from(bytes))
        } else {
            None
        };
        let cap = crate::model::MAX_FILE_BYTES;
        let too_big = |n: u64| {
            Err(format!(
                "{name}: the host page sent {}; at most {} are read",
                crate::format::binary(n),
                crate::format::binary(cap)
            ))
        };
        let got = match (get("text").as_string(), view) {
            (Some(t), _) if t.len() as u64 > cap => too_big(t.len() as u64),
            (Some(t), _) => Ok(t.into_bytes()),
            (None, Some(v)) if u64::from(v.length()) > cap => too_big(u64::from(v.length())),
            (None, Some(v)) => Ok(v.to_vec()),
            (None, None) => Err(format!(
                "{name}: the host page's message has neither `bytes` (ArrayBuffer, Uint8Array) nor `text`"
            )),
        };
        f(name, got);
    });
    // lives as long as the page
    listener.forget();
}

/// Whether the OS asks for a dark theme.
pub fn prefers_dark() -> bool {
    window()
        .and_then(|w| w.match_media("(prefers-color-scheme: dark)").ok().flatten())
        .is_some_and(|m| m.matches())
}

/// Sets `data-theme` on `<html>` (`light` or `dark`).
pub fn set_theme(theme: &str) {
    if let Some(e) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = e.set_attribute("data-theme", theme);
    }
}

/// A value from `localStorage` (none when absent, unreadable or storage is unavailable).
pub fn stored(key: &str) -> Option<String> {
    use gloo_storage::Storage;
    gloo_storage::LocalStorage::get(key).ok()
}

/// Stores a value in `localStorage` (ignored when storage is unavailable).
pub fn store(key: &str, value: &str) {
    use gloo_storage::Storage;
    let _ = gloo_storage::LocalStorage::set(key, value);
}

/// Moves focus to the element with this id.
pub fn focus(id: &str) {
    if let Some(e) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlElement>().ok())
    {
        let _ = e.focus();
    }
}

/// Keeps Tab and Shift+Tab inside the modal element `dialog` (ids): from its `last`
/// focusable element Tab goes to the `first`, from the first Shift+Tab to the last; from the
/// dialog itself (focused by a click on its text) to the first or the last.
pub fn trap_tab(e: &web_sys::KeyboardEvent, dialog: &str, first: &str, last: &str) {
    if e.key() != "Tab" {
        return;
    }
    let Some(d) = window().and_then(|w| w.document()) else {
        return;
    };
    let active = d.active_element();
    let inside = match (&active, d.get_element_by_id(dialog)) {
        (Some(a), Some(box_)) => box_.contains(Some(a)),
        _ => false,
    };
    let id = active.map(|a| a.id()).unwrap_or_default();
    let back = e.shift_key();
    let to = if !inside || id == dialog {
        Some(if back { last } else { first })
    } else if back && id == first {
        Some(last)
    } else if !back && id == last {
        Some(first)
    } else {
        None
    };
    if let Some(to) = to {
        e.prevent_default();
        focus(to);
    }
}

/// Calls `f(key)` for key presses outside text fields (arrows, `/`, ...); `/` is kept from the
/// browser's quick find. Lives as long as the page.
pub fn on_key(f: impl Fn(String) + 'static) {
    let Some(w) = window() else { return };
    let options = gloo_events::EventListenerOptions::enable_prevent_default();
    let listener = gloo_events::EventListener::new_with_options(&w, "keydown", options, move |e| {
        let Some(e) = e.dyn_ref::<web_sys::KeyboardEvent>() else {
            return;
        };
        if e.ctrl_key() || e.meta_key() || e.alt_key() {
            return;
        }
        let typing = e
            .target()
            .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
            .is_some_and(|el| matches!(el.tag_name().as_str(), "INPUT" | "SELECT" | "TEXTAREA"));
        let key = e.key();
        if typing && key != "Escape" {
            return;
        }
        if matches!(
            key.as_str(),
            "/" | "ArrowLeft" | "ArrowRight" | "Home" | "End"
        ) {
            e.prevent_default();
        }
        f(key);
    });
    // lives as long as the page
    listener.forget();
}

/// Calls `f` when the fragment is changed by the user (not by [`replace_hash`]).
pub fn on_hash_change(f: impl Fn() + 'static) {
    let Some(w) = window() else { return };
    gloo_events::EventListener::new(&w, "hashchange", move |_| f()).forget();
}

/// The width, CSS px, at or below which the page is laid out for a phone (style.css's
/// `@media (max-width: 640px)`).
pub const NARROW_PX: u32 = 640;

/// Whether the page is laid out for a phone: the timeline comes before the panes, in the
/// document and so in Tab order (CSS `order` would move only the picture).
pub fn is_narrow() -> bool {
    window()
        .and_then(|w| {
            w.match_media(&format!("(max-width: {NARROW_PX}px)"))
                .ok()
                .flatten()
        })
        .is_some_and(|m| m.matches())
}

/// Calls `f` when the window is resized.
pub fn on_resize(f: impl Fn() + 'static) {
    let Some(w) = window() else { return };
    gloo_events::EventListener::new(&w, "resize", move |_| f()).forget();
}

/// A mouse event's position in the SVG user units of its `currentTarget` box
/// (`width` × `height` units over the element's client rectangle).
pub fn svg_point(e: &web_sys::MouseEvent, width: f64, height: f64) -> Option<(f64, f64, f64, f64)> {
    // Yew delegates events to its root, so `current_target` is not the box: find it from the
    // element under the pointer.
    let target: web_sys::Element = e.target()?.dyn_into().ok()?;
    let el = target.closest(".svgbox").ok()??;
    let r = el.get_bounding_client_rect();
    if r.width() <= 0.0 || r.height() <= 0.0 {
        return None;
    }
    let (lx, ly) = (
        f64::from(e.client_x()) - r.left(),
        f64::from(e.client_y()) - r.top(),
    );
    Some((lx / r.width() * width, ly / r.height() * height, lx, ly))
}

/// Shows the crash screen with `message`: `window.memplanCrash` from `index.html` (which also
/// catches traps that never reach the panic hook, such as running out of memory), or, if that
/// script is missing, the same screen written here.
pub fn show_crash(message: &str) {
    let Some(w) = window() else { return };
    if let Ok(f) = js_sys::Reflect::get(&w, &"memplanCrash".into()) {
        if let Some(f) = f.dyn_ref::<js_sys::Function>() {
            if f.call1(&JsValue::NULL, &message.into()).is_ok() {
                return;
            }
        }
    }
    let msg = crate::format::xml_escape(message);
    if let Some(body) = w.document().and_then(|d| d.body()) {
        body.set_inner_html(&format!(
            r#"<main class="crash" role="alert" data-testid="crash"><h1>The playground stopped</h1><p>Something went wrong inside memplan. Your files were never uploaded; reloading starts again from the link.</p><pre>{msg}</pre><p><button type="button" onclick="location.reload()">Reload the page</button></p></main>"#
        ));
    }
}

/// Installs the panic hook: logs to the console and shows the crash screen ([`show_crash`]).
/// Through Yew: its renderer replaces any hook set with `std::panic::set_hook` by its own,
/// which only logs (why a panic used to leave a silent dead page).
pub fn install_panic_hook() {
    yew::set_custom_panic_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        show_crash(&info.to_string());
    }));
}

/// The element the app renders into (`#app` in `index.html`), emptied of the HTML skeleton
/// shown while the wasm loaded; the body if there is none.
pub fn app_root() -> Option<web_sys::Element> {
    let doc = window()?.document()?;
    match doc.get_element_by_id("app") {
        Some(e) => {
            e.set_inner_html("");
            Some(e)
        }
        None => doc.body().map(Into::into),
    }
}

/// Calls `f` every `ms` milliseconds until the returned handle is dropped.
pub fn every(ms: u32, f: impl FnMut() + 'static) -> gloo_timers::callback::Interval {
    gloo_timers::callback::Interval::new(ms, f)
}

/// The page's planning worker: a dedicated web worker running `script` (a wasm-bindgen
/// `no-modules` script next to the page). Dropping it terminates the worker, mid-job if need be.
pub struct PlanWorker {
    worker: web_sys::Worker,
    _on_message: Closure<dyn FnMut(web_sys::MessageEvent)>,
    _on_error: Closure<dyn FnMut(web_sys::ErrorEvent)>,
}

impl PlanWorker {
    /// Starts the worker: `on_message` gets each text message, `on_error` the message of an
    /// error the worker did not catch (a trap such as running out of memory).
    ///
    /// # Errors
    /// The browser refused to start a worker.
    pub fn spawn(
        script: &str,
        mut on_message: impl FnMut(String) + 'static,
        mut on_error: impl FnMut(String) + 'static,
    ) -> Result<Self, String> {
        let base = window()
            .and_then(|w| w.location().href().ok())
            .unwrap_or_default();
        let js = web_sys::Url::new_with_base(script, &base)
            .map_err(js_err)?
            .href();
        let wasm = js.replace(".js", "_bg.wasm");
        // a loader that imports the no-modules script and starts its wasm (which calls main)
        let parts = js_sys::Array::of1(&JsValue::from_str(&format!(
            "importScripts({js:?});wasm_bindgen({wasm:?});"
        )));
        let opts = web_sys::BlobPropertyBag::new();
        opts.set_type("application/javascript");
        let blob =
            web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts).map_err(js_err)?;
        let url = web_sys::Url::create_object_url_with_blob(&blob).map_err(js_err)?;
        let worker = web_sys::Worker::new(&url).map_err(js_err)?;
        let on_msg =
            Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
                if let Some(t) = e.data().as_string() {
                    on_message(t);
                }
            });
        let on_err =
            Closure::<dyn FnMut(web_sys::ErrorEvent)>::new(move |e: web_sys::ErrorEvent| {
                e.prevent_default();
                on_error(e.message());
            });
        worker.set_onmessage(Some(on_msg.as_ref().unchecked_ref()));
        worker.set_onerror(Some(on_err.as_ref().unchecked_ref()));
        Ok(PlanWorker {
            worker,
            _on_message: on_msg,
            _on_error: on_err,
        })
    }

    /// Sends a text message.
    pub fn post(&self, text: &str) {
        let _ = self.worker.post_message(&JsValue::from_str(text));
    }

    /// Sends `[header, bytes]` (a file to parse), the bytes' buffer transferred, not copied.
    pub fn post_with_bytes(&self, header: &str, bytes: &[u8]) {
        let data = js_sys::Uint8Array::from(bytes);
        let msg = js_sys::Array::of2(&JsValue::from_str(header), &data);
        let _ = self
            .worker
            .post_message_with_transfer(&msg, &js_sys::Array::of1(&data.buffer()));
    }
}

impl Drop for PlanWorker {
    fn drop(&mut self) {
        // An error the worker raises as it dies (the trap after a panic it already answered)
        // must still be cancelled: an uncancelled worker error is reported on the page too.
        let cancel = js_sys::Function::new_with_args("e", "e.preventDefault()");
        self.worker.set_onmessage(None);
        self.worker.set_onerror(Some(&cancel));
        self.worker.terminate();
    }
}

/// Marks the page as showing a plan: `data-ready` on `<html>` and, once, the performance
/// mark `memplan:first-plan` (read by the e2e tests and the benchmark).
pub fn mark_ready() {
    let Some(w) = window() else { return };
    if let Some(e) = w.document().and_then(|d| d.document_element()) {
        if e.get_attribute("data-ready").is_none() {
            let _ = e.set_attribute("data-ready", "1");
            if let Some(p) = w.performance() {
                let _ = p.mark("memplan:first-plan");
            }
        }
    }
}

/// Sets an attribute on `<html>` (counters the e2e tests and the benchmark read).
pub fn set_root_attr(name: &str, value: &str) {
    if let Some(e) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.document_element())
    {
        let _ = e.set_attribute(name, value);
    }
}

/// Scrolls the element with this id to `top` CSS pixels from its top.
pub fn set_scroll_top(id: &str, top: f64) {
    if let Some(e) = window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
    {
        // pixel offsets of a table: far from the limits of i32
        #[allow(clippy::cast_possible_truncation)]
        e.set_scroll_top(top.round() as i32);
    }
}

/// The window's inner width, CSS px (0 outside a browser).
pub fn window_width() -> f64 {
    window()
        .and_then(|w| w.inner_width().ok())
        .and_then(|v| v.as_f64())
        .unwrap_or(0.0)
}

/// The width in CSS pixels of the element with this id (0 if absent).
pub fn client_width(id: &str) -> i32 {
    window()
        .and_then(|w| w.document())
        .and_then(|d| d.get_element_by_id(id))
        .map_or(0, |e| e.client_width())
}

/// Paints a timeline scene on the canvas with this id, sized to its element's width at the
/// device's pixel ratio (user units scale to the width; the height follows the aspect).
/// Returns the milliseconds it took.
pub fn paint_scene(id: &str, scene: &crate::timeline::Scene) -> f64 {
    use crate::timeline::{Anchor, Shape, Stroke};
    let t0 = now_ms();
    let Some(w) = window() else { return 0.0 };
    let Some(canvas) = w
        .document()
        .and_then(|d| d.get_element_by_id(id))
        .and_then(|e| e.dyn_into::<web_sys::HtmlCanvasElement>().ok())
    else {
        return 0.0;
    };
    let css_w = f64::from(canvas.client_width()).max(1.0);
    let dpr = w.device_pixel_ratio().clamp(1.0, 3.0);
    let k = css_w * dpr / scene.width;
    // Canvas sizes are whole pixels, a few thousand at most.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let (pw, ph) = (
        (scene.width * k).round() as u32,
        (scene.height * k).round() as u32,
    );
    if canvas.width() != pw || canvas.height() != ph {
        canvas.set_width(pw);
        canvas.set_height(ph);
    }
    let Some(ctx) = canvas
        .get_context("2d")
        .ok()
        .flatten()
        .and_then(|c| c.dyn_into::<web_sys::CanvasRenderingContext2d>().ok())
    else {
        return 0.0;
    };
    let _ = ctx.set_transform(k, 0.0, 0.0, k, 0.0, 0.0);
    ctx.set_global_alpha(1.0);
    ctx.set_fill_style_str(scene.bg);
    ctx.fill_rect(0.0, 0.0, scene.width, scene.height);
    let font = format!(
        "{:.1}px system-ui,-apple-system,Segoe UI,sans-serif",
        scene.font
    );
    let bold_font = format!("600 {font}");
    ctx.set_font(&font);
    let stroke = |s: &Stroke| {
        ctx.set_stroke_style_str(s.color);
        ctx.set_line_width(s.width);
        let dash = js_sys::Array::new();
        if let Some(d) = s.dash {
            for part in d.split_whitespace() {
                if let Ok(v) = part.parse::<f64>() {
                    dash.push(&JsValue::from_f64(v));
                }
            }
        }
        let _ = ctx.set_line_dash(&dash);
    };
    let draw = |shape: &Shape| match shape {
        Shape::Rect {
            x,
            y,
            w,
            h,
            fill,
            opacity,
            stroke: s,
            ..
        } => {
            if let Some(f) = fill {
                ctx.set_global_alpha(*opacity);
                ctx.set_fill_style_str(f);
                ctx.fill_rect(*x, *y, *w, *h);
            }
            if let Some(s) = s {
                ctx.set_global_alpha(s.opacity);
                stroke(s);
                ctx.stroke_rect(*x, *y, *w, *h);
            }
            ctx.set_global_alpha(1.0);
        }
        Shape::Line {
            from,
            to,
            stroke: s,
        } => {
            ctx.set_global_alpha(s.opacity);
            stroke(s);
            ctx.begin_path();
            ctx.move_to(from.0, from.1);
            ctx.line_to(to.0, to.1);
            ctx.stroke();
            ctx.set_global_alpha(1.0);
        }
        Shape::Text {
            x,
            y,
            text,
            anchor,
            color,
            bold,
            opacity,
            halo,
        } => {
            ctx.set_font(if *bold { &bold_font } else { &font });
            ctx.set_text_align(match anchor {
                Anchor::Start => "start",
                Anchor::Middle => "center",
                Anchor::End => "end",
            });
            ctx.set_global_alpha(*opacity);
            if let Some(h) = halo {
                ctx.set_stroke_style_str(h);
                ctx.set_line_width(3.0);
                let _ = ctx.set_line_dash(&js_sys::Array::new());
                let _ = ctx.stroke_text(text, *x, *y);
            }
            ctx.set_fill_style_str(color);
            let _ = ctx.fill_text(text, *x, *y);
            ctx.set_global_alpha(1.0);
        }
        Shape::Cells {
            fill,
            opacity,
            runs,
        } => {
            ctx.set_global_alpha(*opacity);
            ctx.set_fill_style_str(fill);
            ctx.begin_path();
            for (x, y, w) in runs {
                ctx.rect(*x, *y, *w, crate::timeline::CELL);
            }
            ctx.fill();
            ctx.set_global_alpha(1.0);
        }
    };
    // the labels' size on screen, CSS px (what a test of legibility reads)
    let _ = canvas.set_attribute(
        "data-font-px",
        &format!("{:.1}", scene.font * css_w / scene.width.max(1.0)),
    );
    if let Some((x, y)) = scene.largest {
        let _ = canvas.set_attribute("data-largest", &format!("{x:.1},{y:.1}"));
    }
    let (cx, cy, cw, ch) = scene.clip;
    for s in scene
        .plot
        .iter()
        .filter(|s| matches!(s, Shape::Line { .. } | Shape::Text { .. }))
    {
        draw(s);
    }
    ctx.save();
    ctx.begin_path();
    ctx.rect(cx, cy, cw, ch);
    ctx.clip();
    // Boxes one call per colour, not per box: in a valid plan they never overlap, so the
    // order among fills does not matter, and outlines go over every fill (thinnest first).
    // Thousands of single fillRect/strokeRect calls took over a second on a 62k trace.
    type Rects = Vec<(f64, f64, f64, f64)>;
    // (colour, opacity bits) and (outline) → the boxes drawn so
    type Fills<'a> = Vec<((&'a str, u64), Rects)>;
    type Strokes<'a> = Vec<(&'a Stroke, Rects)>;
    let mut fills: Fills = Vec::new();
    let mut strokes: Strokes = Vec::new();
    let flush = |fills: &mut Fills, strokes: &mut Strokes| {
        for ((fill, opacity), rects) in fills.drain(..) {
            ctx.set_global_alpha(f64::from_bits(opacity));
            ctx.set_fill_style_str(fill);
            ctx.begin_path();
            for (x, y, w, h) in rects {
                ctx.rect(x, y, w, h);
            }
            ctx.fill();
        }
        strokes.sort_by(|a, b| a.0.width.total_cmp(&b.0.width));
        for (s, rects) in strokes.drain(..) {
            ctx.set_global_alpha(s.opacity);
            stroke(s);
            ctx.begin_path();
            for (x, y, w, h) in rects {
                ctx.rect(x, y, w, h);
            }
            ctx.stroke();
        }
        ctx.set_global_alpha(1.0);
    };
    for s in scene
        .plot
        .iter()
        .filter(|s| !matches!(s, Shape::Line { .. } | Shape::Text { .. }))
    {
        if let Shape::Rect {
            x,
            y,
            w,
            h,
            fill,
            opacity,
            stroke: st,
            ..
        } = s
        {
            let r = (*x, *y, *w, *h);
            if let Some(f) = fill {
                let key = (*f, opacity.to_bits());
                match fills.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, v)) => v.push(r),
                    None => fills.push((key, vec![r])),
                }
            }
            if let Some(st) = st {
                match strokes.iter_mut().find(|(k, _)| *k == st) {
                    Some((_, v)) => v.push(r),
                    None => strokes.push((st, vec![r])),
                }
            }
            continue;
        }
        flush(&mut fills, &mut strokes);
        draw(s);
    }
    flush(&mut fills, &mut strokes);
    ctx.restore();
    for s in &scene.over {
        draw(s);
    }
    let ms = now_ms() - t0;
    let _ = canvas.set_attribute("data-paint-ms", &format!("{ms:.1}"));
    // how many times the picture was painted (tests check pointer moves do not repaint)
    let paints = canvas
        .get_attribute("data-paints")
        .and_then(|v| v.parse::<u64>().ok())
        .unwrap_or(0);
    let _ = canvas.set_attribute("data-paints", &(paints + 1).to_string());
    ms
}

/// The value of the `<input>` or `<select>` an event came from (`""` for other targets).
pub fn event_value(e: &web_sys::Event) -> String {
    e.target()
        .and_then(|t| {
            t.clone()
                .dyn_into::<web_sys::HtmlSelectElement>()
                .map(|s| s.value())
                .ok()
                .or_else(|| {
                    t.dyn_into::<web_sys::HtmlInputElement>()
                        .ok()
                        .map(|i| i.value())
                })
        })
        .unwrap_or_default()
}

/// Whether the element an event came from has attribute `name` (a `<details>`'s `open` after
/// its `toggle`).
pub fn event_target_has(e: &web_sys::Event, name: &str) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .is_some_and(|el| el.has_attribute(name))
}

/// Whether the checkbox an event came from is checked (`false` for other targets).
pub fn event_checked(e: &web_sys::Event) -> bool {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::HtmlInputElement>().ok())
        .is_some_and(|i| i.checked())
}

/// The vertical scroll position of the element an event came from, CSS pixels.
pub fn event_scroll_top(e: &web_sys::Event) -> Option<f64> {
    e.target()
        .and_then(|t| t.dyn_into::<web_sys::Element>().ok())
        .map(|el| f64::from(el.scroll_top()))
}
