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
    let buf = JsFuture::from(file.array_buffer())
        .await
        .map_err(|e| format!("could not read '{name}': {}", js_err(e)))?;
    Ok((name, js_sys::Uint8Array::new(&buf).to_vec()))
}

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

/// Saves `text` as a download called `name`.
pub fn download(name: &str, mime: &str, text: &str) {
    let parts = js_sys::Array::of1(&JsValue::from_str(text));
    let opts = web_sys::BlobPropertyBag::new();
    opts.set_type(mime);
    let Ok(blob) = web_sys::Blob::new_with_str_sequence_and_options(&parts, &opts) else {
        return;
    };
    let Ok(url) = web_sys::Url::create_object_url_with_blob(&blob) else {
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
    if let Ok(Some(parent)) = w.parent() {
        let msg = js_sys::Object::new();
        let _ = js_sys::Reflect::set(&msg, &"type".into(), &"memplan:height".into());
        let _ = js_sys::Reflect::set(&msg, &"height".into(), &JsValue::from(h));
        let _ = parent.post_message(&msg, "*");
    }
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

/// A value from `localStorage`.
pub fn stored(key: &str) -> Option<String> {
    window()?.local_storage().ok()??.get_item(key).ok()?
}

/// Stores a value in `localStorage` (ignored when storage is unavailable).
pub fn store(key: &str, value: &str) {
    if let Some(Ok(Some(s))) = window().map(|w| w.local_storage()) {
        let _ = s.set_item(key, value);
    }
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

/// Calls `f(key)` for key presses outside text fields (arrows, `/`, ...); `/` is kept from the
/// browser's quick find. Lives as long as the page.
pub fn on_key(f: impl Fn(String) + 'static) {
    let Some(w) = window() else { return };
    let cb = Closure::<dyn Fn(web_sys::KeyboardEvent)>::new(move |e: web_sys::KeyboardEvent| {
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
    let _ = w.add_event_listener_with_callback("keydown", cb.as_ref().unchecked_ref());
    cb.forget();
}

/// Calls `f` when the fragment is changed by the user (not by [`replace_hash`]).
pub fn on_hash_change(f: impl Fn() + 'static) {
    let Some(w) = window() else { return };
    let cb = Closure::<dyn Fn()>::new(f);
    let _ = w.add_event_listener_with_callback("hashchange", cb.as_ref().unchecked_ref());
    cb.forget();
}

/// Calls `f` when the window is resized.
pub fn on_resize(f: impl Fn() + 'static) {
    let Some(w) = window() else { return };
    let cb = Closure::<dyn Fn()>::new(f);
    let _ = w.add_event_listener_with_callback("resize", cb.as_ref().unchecked_ref());
    cb.forget();
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

/// Installs the panic hook: logs to the console and replaces the page with the crash screen.
pub fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        console_error_panic_hook::hook(info);
        let msg = crate::format::xml_escape(&info.to_string());
        if let Some(body) = window().and_then(|w| w.document()).and_then(|d| d.body()) {
            body.set_inner_html(&format!(
                r#"<main class="crash" role="alert"><h1>The playground stopped</h1><p>Something went wrong inside memplan. Your files were never uploaded; reloading starts again from the link.</p><pre>{msg}</pre><p><button type="button" onclick="location.reload()">Reload the page</button></p><p class="muted">If this keeps happening, please report the message above.</p></main>"#
            ));
        }
    }));
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
