package dev.webtensor.nn;

import dev.webtensor.Tensor;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * Sub-modules in a list, registered as "0", "1", ... (torch.nn.ModuleList):
 * their parameters are the list's, named by position. Like torch's, it has
 * no forward of its own; iterate it.
 */
public final class ModuleList extends Module implements Iterable<Module> {
    private final List<Module> modules = new ArrayList<>();

    public ModuleList(Module... modules) {
        extend(List.of(modules));
    }

    /** Adds m at the end; returns this. */
    public ModuleList append(Module m) {
        registerModule(String.valueOf(modules.size()), m);
        modules.add(m);
        return this;
    }

    public ModuleList extend(Iterable<? extends Module> ms) {
        for (Module m : ms) {
            append(m);
        }
        return this;
    }

    /** The module at position i. */
    public Module get(int i) {
        return modules.get(i);
    }

    public int size() {
        return modules.size();
    }

    @Override
    public Iterator<Module> iterator() {
        return List.copyOf(modules).iterator();
    }

    /** torch's ModuleList has no forward either: a list holds layers, a model says how they chain. */
    @Override
    public Tensor forward(Tensor x) {
        throw new UnsupportedOperationException("ModuleList has no forward (as torch's): iterate its modules");
    }
}
