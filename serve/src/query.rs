//! The one reader of query strings. Every route reads its parameters here, so that a
//! parameter means one thing to every route, and to any proxy or filter in front of the
//! service: names and values are percent-decoded as HTML forms are, and a name given twice
//! is refused rather than read first by one route and last by another. A `/v1` route also
//! refuses a name it does not read, so that a misspelt `cuont=100` is an error, not one
//! ID; the Leaf routes ignore such names, as Leaf does.

use std::str::FromStr;

use crate::refusal::Refusal;

/// A request's query parameters, each name at most once.
#[derive(Debug, Default)]
pub struct Params(Vec<(String, String)>);

impl Params {
    /// Reads a query string (`None`: no `?` in the request).
    ///
    /// # Errors
    /// 400 `REPEATED_PARAMETER` for a name given more than once.
    pub fn parse(query: Option<&str>) -> Result<Params, Refusal> {
        let mut params: Vec<(String, String)> = Vec::new();
        for (name, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            if params.iter().any(|(seen, _)| *seen == name) {
                return Err(Refusal::bad_input(
                    "REPEATED_PARAMETER",
                    format!(
                        "the query parameter {:?} is given more than once",
                        shown(&name)
                    ),
                ));
            }
            params.push((name.into_owned(), value.into_owned()));
        }
        Ok(Params(params))
    }

    /// Reads a query string in which every name is one of `known`, the parameters the
    /// route reads.
    ///
    /// # Errors
    /// 400 `REPEATED_PARAMETER` for a name given more than once, 400 `UNKNOWN_PARAMETER`
    /// for a name not in `known`.
    pub fn parse_only(query: Option<&str>, known: &[&str]) -> Result<Params, Refusal> {
        let params = Params::parse(query)?;
        if let Some((name, _)) = params
            .0
            .iter()
            .find(|(name, _)| !known.contains(&name.as_str()))
        {
            let reads = match known {
                [] => "no parameters".to_owned(),
                _ => known.join(", "),
            };
            return Err(Refusal::bad_input(
                "UNKNOWN_PARAMETER",
                format!(
                    "this route does not read the query parameter {:?} (it reads {reads})",
                    shown(name)
                ),
            ));
        }
        Ok(params)
    }

    /// The value of `name`, if given.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(given, _)| given == name)
            .map(|(_, value)| value.as_str())
    }

    /// The number `name` gives, if given.
    ///
    /// # Errors
    /// 400 `BAD_PARAMETER` for a value that is not a whole number in `T`'s range.
    pub fn number<T: FromStr>(&self, name: &str) -> Result<Option<T>, Refusal> {
        let Some(text) = self.get(name) else {
            return Ok(None);
        };
        text.parse().map(Some).map_err(|_| {
            Refusal::bad_input(
                "BAD_PARAMETER",
                format!("{name}={:?} is not a whole number in range", shown(text)),
            )
        })
    }

    /// The number `name` gives, which the route needs.
    ///
    /// # Errors
    /// 400 `BAD_PARAMETER` if it is missing or not a whole number in `T`'s range.
    pub fn required_number<T: FromStr>(&self, name: &str) -> Result<T, Refusal> {
        self.number(name)?.ok_or_else(|| {
            Refusal::bad_input(
                "BAD_PARAMETER",
                format!("the query parameter {name} is missing"),
            )
        })
    }
}

/// The first 40 characters of what a client sent, for a message.
fn shown(text: &str) -> String {
    text.chars().take(40).collect()
}

#[cfg(test)]
mod tests {
    use super::Params;

    #[test]
    fn names_and_values_are_percent_decoded() {
        let params = Params::parse(Some("c%6Funt=%31%32&format=dec&empty=")).unwrap();
        assert_eq!(params.get("count"), Some("12"));
        assert_eq!(params.get("format"), Some("dec"));
        assert_eq!(params.get("empty"), Some(""));
        assert_eq!(params.get("missing"), None);
        assert_eq!(params.number::<u64>("count").unwrap(), Some(12));
        assert!(Params::parse(None).unwrap().get("count").is_none());
    }

    #[test]
    fn a_name_given_twice_is_refused_however_it_is_spelled() {
        for query in ["count=1&count=2", "count=1&c%6Funt=1", "a=1&b=2&a=1"] {
            let refusal = Params::parse(Some(query)).unwrap_err();
            assert_eq!(
                (refusal.status.as_u16(), refusal.kind),
                (400, "REPEATED_PARAMETER"),
                "{query}"
            );
        }
    }

    #[test]
    fn a_name_the_route_does_not_read_is_refused() {
        let params = Params::parse_only(Some("c%6Funt=2&format=dec"), &["count", "format"]);
        assert_eq!(params.unwrap().get("count"), Some("2"));
        for (query, known) in [
            ("cuont=100", &["count"][..]),
            ("count=1&x=", &["count"][..]),
            ("_=1", &[][..]),
        ] {
            let refusal = Params::parse_only(Some(query), known).unwrap_err();
            assert_eq!(
                (refusal.status.as_u16(), refusal.kind),
                (400, "UNKNOWN_PARAMETER"),
                "{query}"
            );
        }
        let repeated = Params::parse_only(Some("x=1&x=2"), &[]).unwrap_err();
        assert_eq!(repeated.kind, "REPEATED_PARAMETER");
        assert!(Params::parse_only(None, &[]).is_ok());
    }

    #[test]
    fn numbers_out_of_range_or_missing_are_bad_parameters() {
        let params = Params::parse(Some("step=-1&above=x")).unwrap();
        for name in ["step", "above"] {
            assert_eq!(
                params.number::<u64>(name).unwrap_err().kind,
                "BAD_PARAMETER"
            );
        }
        let missing = params.required_number::<u64>("start").unwrap_err();
        assert!(missing.message.contains("start is missing"), "{missing:?}");
    }
}
