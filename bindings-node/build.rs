//! Sets the linker flags a Node addon needs (undefined napi symbols resolved by Node at load).
fn main() {
    napi_build::setup();
}
