package dev.webtensor;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A loaded WebAssembly plugin (plugins-wasm/ABI.md): its name and op names,
 * and its ops by short name; they run like built-in ones, on every device,
 * with autograd. Python's {@code wt.Plugin}.
 *
 * <pre>{@code
 * Plugin p = Plugin.load(Path.of("cclip.wasm"));
 * Tensor[] y = p.call("soft_clip", new Tensor[] {x}, Attr.of("limit", 2.0));
 * }</pre>
 */
public final class Plugin {
    private final String name;
    private final List<String> ops;

    private Plugin(String name) {
        this.name = name;
        List<String> out = new ArrayList<>();
        for (Object o : (List<?>) Json.parse(Webtensor.pluginOpsJson(name), "wt_plugin_ops")) {
            out.add((String) o);
        }
        this.ops = List.copyOf(out);
    }

    /** Loads the plugin module at path and registers its ops. */
    public static Plugin load(Path wasm) {
        return new Plugin(Webtensor.loadPlugin(wasm));
    }

    /** Loads a plugin module from memory; label names it in errors. */
    public static Plugin load(byte[] wasm, String label) {
        return new Plugin(Webtensor.loadPlugin(wasm, label));
    }

    /** The plugin loaded under name (what {@link Webtensor#loadPlugin} returned); an unknown name is an error. */
    public static Plugin of(String name) {
        return new Plugin(name);
    }

    public String name() {
        return name;
    }

    /** Full op names, "plugin.op". */
    public List<String> ops() {
        return ops;
    }

    /** Runs the plugin's op by its short or full name; returns every output. */
    public Tensor[] call(String op, Tensor[] inputs, Attr... attrs) {
        String full = op.contains(".") ? op : name + "." + op;
        if (!ops.contains(full)) {
            throw new IllegalArgumentException("plugin " + name + " has no op " + op + " (it has " + ops + ")");
        }
        return Webtensor.op(full, inputs, attrs);
    }

    @Override
    public String toString() {
        return "Plugin(" + name + ", ops=" + ops + ")";
    }
}
