//! A component that is not a Weir plugin: it exports `run` instead of `handle`.

wit_bindgen::generate!({
    inline: "package test:wrong; world other { export run: func() -> u32; }",
    world: "other",
});

struct Other;

impl Guest for Other {
    fn run() -> u32 {
        7
    }
}

export!(Other);
