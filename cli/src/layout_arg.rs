//! `--layout`'s value: a preset name or a layout spelling, read by core's `Layout::parse`.

use ferroflake::Layout;

/// A layout chosen on the command line, with the name it is shown by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NamedLayout {
    /// The preset's name (lower case), or the layout's spelling as core prints it.
    pub name: String,
    pub layout: Layout,
}

impl NamedLayout {
    /// clap's value parser for `--layout`: refusals are core's, so every face words them
    /// alike, and clap makes them a usage error (exit status 2).
    pub fn parse(text: &str) -> Result<NamedLayout, ferroflake::Error> {
        let layout = Layout::parse(text)?;
        let name = match Layout::from_name(text) {
            Ok(_) => text.to_ascii_lowercase(),
            Err(_) => layout.to_string(),
        };
        Ok(NamedLayout { name, layout })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presets_keep_their_name_and_spellings_are_shown_as_core_prints_them() {
        let preset = NamedLayout::parse("Sonyflake").unwrap();
        assert_eq!(
            (preset.name.as_str(), preset.layout),
            ("sonyflake", Layout::sonyflake())
        );
        let spelled = NamedLayout::parse("41/8/14@1288834974657").unwrap();
        assert_eq!(spelled.name, "41/8/14@2010-11-04T01:42:54.657Z");
        assert_eq!(
            NamedLayout::parse("41/8/14@x").unwrap_err().kind(),
            ferroflake::ErrorKind::UnknownLayout
        );
    }
}
