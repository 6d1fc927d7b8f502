//! Downloads: the plan JSON, the timeline as SVG or PNG, the tensors CSV and the TFLM files.

use super::*;

impl App {
    /// Downloads pane `i`'s plan of the open `.tflite` model as `file`.
    ///
    /// # Errors
    /// The pane's message: no plan yet, or core's refusal to export it.
    pub(crate) fn export_tflm(&self, i: usize, file: crate::tflm::TflmFile) -> Result<(), String> {
        let (Some(b), Some(src), Some(s)) = (&self.built, &self.source, self.state.panes.get(i))
        else {
            return Err("No model loaded.".to_string());
        };
        let Some(r) = self.results.get(i).and_then(|r| r.done()) else {
            return Err("This pane has no plan yet.".to_string());
        };
        let files = crate::tflm::files(
            src,
            b,
            &self.state.bindings,
            &self.state.gears,
            &self.lowering(),
            &s.strategy,
            &r.plan,
        )?;
        let stem = src
            .name
            .rsplit_once('.')
            .map_or(src.name.as_str(), |(s, _)| s);
        let tag = s
            .strategy
            .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_");
        match file {
            crate::tflm::TflmFile::Model => platform::download_bytes(
                &format!("{stem}.{tag}.tflite"),
                "application/octet-stream",
                &files.tflite,
            ),
            crate::tflm::TflmFile::Header => {
                platform::download(&format!("{stem}.{tag}.h"), "text/x-c", &files.header);
            }
        }
        Ok(())
    }

    pub(crate) fn export(&self, kind: Export) {
        let (Some(b), Some(src)) = (&self.built, &self.source) else {
            return;
        };
        let stem = src
            .name
            .rsplit_once('.')
            .map_or(src.name.as_str(), |(s, _)| s)
            .to_string();
        match kind {
            Export::PlanJson => {
                let plans: Vec<(&PaneSettings, &PaneResult)> = self
                    .state
                    .panes
                    .iter()
                    .zip(&self.results)
                    .filter_map(|(s, r)| r.done().map(|r| (s, r)))
                    .collect();
                let (link, _) = self.link(false);
                // it fails only on sizes that overflow, which the build refused already
                if let Ok(json) = crate::export::plan_json(&src.name, b, &plans, Some(&link)) {
                    platform::download(&format!("{stem}.plan.json"), "application/json", &json);
                }
            }
            Export::Svg | Export::Png => {
                if let (Some(r), Some(vp)) = (self.focused(), self.view()) {
                    let gear = self
                        .gear_shown()
                        .map_or(String::new(), |g| format!(" · gear: batch {g}"));
                    let (link, _) = self.link(false);
                    let o = crate::timeline::SvgOptions {
                        step: self.state.step,
                        dark: false,
                        title: Some(format!(
                            "{} · {}{gear}",
                            src.name,
                            self.state.panes[self.state.focus].label()
                        )),
                        budget: self.state.budget,
                        lower_bound: Some(r.lower_bound),
                        caption: Some(format!(
                            "memplan: peak {} vs lower bound {} · open in the playground: {}",
                            crate::format::binary(r.plan.peak),
                            crate::format::binary(r.lower_bound),
                            if link.len() > 140 {
                                format!("{}…", link.chars().take(140).collect::<String>())
                            } else {
                                link
                            }
                        )),
                        ..Default::default()
                    };
                    let mut o = o;
                    // in a diff, the outlines of what moved, as on screen, and a caption saying so
                    let diff = match (self.state.compare.mode, self.compared().first()) {
                        (CompareMode::Diff, Some(&(j, other))) => {
                            let moved = analysis::moved(&r.plan, &other.plan);
                            let shapes = crate::timeline::diff_shapes(
                                &b.problem, r, other, &moved, &vp, false,
                            );
                            if let Some(t) = &mut o.title {
                                t.push_str(&format!(
                                    " · diff against pane {}: {} tensors moved (outlined: here; dashed: in pane {})",
                                    j + 1,
                                    moved.len(),
                                    j + 1
                                ));
                            }
                            shapes
                        }
                        _ => Vec::new(),
                    };
                    let svg = crate::timeline::timeline_svg(&b.problem, &b.info, r, &vp, &o, diff);
                    if kind == Export::Png {
                        platform::download_png(
                            &format!("{stem}.timeline.png"),
                            &svg,
                            crate::timeline::W,
                            crate::timeline::H + 18.0,
                            2.0,
                        );
                    } else {
                        platform::download(&format!("{stem}.timeline.svg"), "image/svg+xml", &svg);
                    }
                }
            }
            Export::Csv => {
                // the whole plan, not the view restricted to the gear on screen
                let whole = self.results.get(self.state.focus).and_then(|r| r.done());
                if let Some(r) = whole {
                    platform::download(
                        &format!("{stem}.tensors.csv"),
                        "text/csv",
                        &crate::export::tensors_csv(&b.problem, &b.info, r),
                    );
                }
            }
        }
    }
}
