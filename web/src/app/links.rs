//! The share link: what it carries of the open model, writing it into the address bar, and
//! the Copy link and Embed actions.

use super::*;

/// A model's `m=` part for links ([`share::lowered_part`]), or its length in characters when
/// over [`share::MAX_LINK`].
pub(super) type LoweredPart = Result<Rc<str>, usize>;

/// Up to this many buffers, a local file's lowered problem is made for the address bar's link
/// as soon as it is built; a larger one only when a link is asked for (Copy link, Embed).
pub(super) const EAGER_LOWERED_BUFFERS: usize = 8_000;

impl App {
    pub(crate) fn model_ref(&self) -> Option<ModelRef> {
        if self.state.missing_model.is_some() {
            return None;
        }
        let src = self.source.as_ref()?;
        match &src.origin {
            Origin::Sample(id) => Some(ModelRef::Sample(id.clone())),
            Origin::Url(u) => Some(ModelRef::Url(u.clone())),
            Origin::File | Origin::Link => self.inline.clone().or_else(|| {
                Some(ModelRef::Lowered {
                    name: src.name.clone(),
                    json: Vec::new(),
                    part: self.lowered()?.ok()?,
                })
            }),
        }
    }

    /// The model as links carry it lowered, if made ([`App::make_lowered`]): the `m=` part,
    /// or its length when over the limit; `None` when the model travels otherwise.
    pub(crate) fn lowered(&self) -> Option<LoweredPart> {
        let (src, b) = (self.source.as_ref()?, self.built.as_ref()?);
        if self.inline.is_some() || self.state.missing_model.is_some() {
            return None;
        }
        match src.origin {
            Origin::Link if src.format == Format::Lowered => self.link_part.clone().map(Ok),
            Origin::File | Origin::Link => self
                .lowered_cache
                .borrow()
                .as_ref()
                .filter(|(k, _)| Rc::ptr_eq(k, b))
                .map(|(_, r)| r.clone()),
            _ => None,
        }
    }

    /// Makes the lowered part of a local file's model for links, once per build; on large
    /// problems only when a link is asked for, as it is a main-thread deflate of the whole
    /// problem (about 0.2 s for 60k buffers).
    pub(crate) fn make_lowered(&self, asked: bool) {
        let (Some(src), Some(b)) = (self.source.as_ref(), self.built.as_ref()) else {
            return;
        };
        let mine =
            matches!(src.origin, Origin::File | Origin::Link) && src.format != Format::Lowered;
        if !mine
            || self.inline.is_some()
            || self.state.missing_model.is_some()
            || (!asked && b.problem.buffers.len() > EAGER_LOWERED_BUFFERS)
            || self.lowered().is_some()
        {
            return;
        }
        let part = share::lowered_part(b).map(Rc::from);
        *self.lowered_cache.borrow_mut() = Some((b.clone(), part));
    }

    /// The state a link carries.
    pub(crate) fn shared(&self) -> Shared {
        let model = self.model_ref();
        let missing = match (&model, &self.state.missing_model, &self.source) {
            (Some(_), _, _) => None,
            (None, Some(name), _) => Some(name.clone()),
            (None, None, Some(src)) => Some(share::short_name(&src.name)),
            (None, None, None) => None,
        }
        .filter(|n| !n.is_empty());
        let selected = self
            .state
            .selected
            .and_then(|i| self.built.as_ref()?.problem.buffers.get(i))
            .map(|b| b.name.clone());
        self.state.shared(model, missing, selected)
    }

    pub(crate) fn sync_hash(&mut self) {
        if self.source.is_none() {
            return;
        }
        self.sync_timer = None;
        self.make_lowered(false);
        let (h, _) = share::encode(&self.shared());
        if h != self.state.last_hash {
            // a new model or sample is a new history entry (Back returns to the last one);
            // settings, zoom and the like replace the current one
            if std::mem::take(&mut self.state.push_next) {
                platform::push_hash(&h);
            } else {
                platform::replace_hash(&h);
            }
            self.state.last_hash = h;
        }
    }

    /// Updates the link a little later: zooming and typing change it many times a second.
    pub(crate) fn sync_hash_soon(&mut self) {
        if let Some(link) = &self.link {
            let link = link.clone();
            self.sync_timer = Some(platform::after(300, move || {
                link.send_message(Msg::SyncHash)
            }));
        }
    }

    /// The full link to this view (`embed` adds `?embed=1`).
    pub(crate) fn link(&self, embed: bool) -> (String, bool) {
        self.make_lowered(true);
        let state = self.shared();
        // a file too large to inline leaves the link without a model
        let (h, inline_ok) = share::encode(&state);
        let whole = inline_ok && state.model.is_some();
        let base = platform::page_url(false);
        let q = if embed {
            format!(
                "?embed=1&theme={}",
                if self.dark() { "dark" } else { "light" }
            )
        } else {
            String::new()
        };
        (format!("{base}{q}#{h}"), whole)
    }

    /// Why a link or embed of this view will not show its model, if it will not.
    pub(crate) fn link_warning(&self, embed: bool) -> Option<String> {
        let (what, opener) = if embed {
            ("The embed", "the frame")
        } else {
            ("The link", "whoever opens it")
        };
        if self.state.missing_model.is_some() {
            return Some(format!("{what} keeps every setting, but not the model: the link this view came from did not include it either, so {opener} will show the default sample, with a notice saying so."));
        }
        let (_, whole) = self.link(embed);
        if whole {
            return None;
        }
        let why = match self.lowered() {
            Some(Err(len)) => format!("this model is too large to carry, even as its lowered problem ({} compressed; a link carries at most {})", crate::format::chars(len), crate::format::chars(share::MAX_LINK)),
            _ => "this model is too large to carry inline".to_string(),
        };
        Some(format!("{what} keeps every setting, but {why}: {opener} will show the default sample instead, with a notice saying so. To share the model itself, serve the file and open it with ?model=<its URL>, or pick a built-in sample."))
    }

    /// What a link or embed of this view carries instead of the model's file, if it carries
    /// the lowered problem.
    pub(crate) fn link_info(&self, embed: bool) -> Option<String> {
        let part = self.lowered()?.ok()?;
        let what = if embed { "The embed" } else { "The link" };
        // a buffer list (CSV) has no ops, shapes, dims or gears to carry: say only what there is
        let graph = self.built.as_ref().is_some_and(|b| b.is_graph);
        let (carried, fixed) = if graph {
            (
                "its buffers with their sizes and live ranges, ops and shapes",
                "; the dims, gears and lowering settings stay as they are now",
            )
        } else {
            ("its buffers with their sizes and live ranges", "")
        };
        Some(format!("{what} carries this model's lowered problem ({} of link), not the file: {carried}, so it plans to the same figures{fixed}.", crate::format::chars(part.len())))
    }

    pub(crate) fn copy_link(&mut self, ctx: &Context<Self>) {
        let (url, _) = self.link(false);
        platform::replace_hash(url.split_once('#').map_or("", |x| x.1));
        let note = match (self.link_warning(false), self.link_info(false)) {
            (Some(w), _) => format!("Link copied. {w}"),
            (None, Some(i)) => format!("Link copied: it reproduces this view. {i}"),
            (None, None) => "Link copied: it reproduces this view.".to_string(),
        };
        ctx.link().send_future(async move {
            match platform::copy_text(&url).await {
                Ok(()) => Msg::Notice(note),
                Err(e) => Msg::Notice(format!(
                    "Could not copy ({e}); the address bar holds the link."
                )),
            }
        });
    }

    pub(crate) fn show_embed(&mut self) {
        let (url, _) = self.link(true);
        let name = self.source.as_ref().map_or("plan", |s| s.name.as_str());
        self.embed_warning = self.link_warning(true);
        self.embed_info = self.link_info(true);
        let title = match (&self.embed_warning, &self.state.missing_model) {
            (None, _) => name.to_string(),
            (Some(_), Some(m)) if m.is_empty() => "model not included".to_string(),
            (Some(_), Some(m)) => format!("{m} (model not included)"),
            (Some(_), None) => format!("{name} (model not included)"),
        };
        self.state.notice = self.embed_warning.clone();
        self.dialog_note = None;
        self.focus_dialog = true;
        self.dialog = Some(format!(
            "<iframe src=\"{}\" title=\"memplan: {}\" style=\"width:100%;height:560px;border:0\" loading=\"lazy\"></iframe>\n<script>addEventListener('message',e=>{{if(e.data&&e.data.type==='memplan:height')for(const f of document.querySelectorAll('iframe'))if(f.contentWindow===e.source)f.style.height=e.data.height+'px'}})</script>",
            crate::format::xml_escape(&url),
            crate::format::xml_escape(&title)
        ));
    }

    pub(crate) fn copy_snippet(&self, ctx: &Context<Self>) {
        if let Some(snippet) = self.dialog.clone() {
            ctx.link().send_future(async move {
                Msg::DialogNote(match platform::copy_text(&snippet).await {
                    Ok(()) => "Copied.".to_string(),
                    Err(e) => format!("Could not copy ({e}): select the text and copy it."),
                })
            });
        }
    }
}
