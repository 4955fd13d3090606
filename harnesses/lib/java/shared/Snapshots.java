package reactconformance.shared;

import java.util.List;

/** TRJ-2's mutation of what a library handed the caller (the protocol's `mutate_last_result`). */
public final class Snapshots {
    private Snapshots() {}

    /** Adds {@code marker} to the caller's {@code list}: the line the suite reads, or the refusal. */
    public static <T> String mutated(String container, List<T> list, T marker) {
        try {
            list.add(marker);
            return container;
        } catch (UnsupportedOperationException e) {
            return "refused: " + container + ": " + e;
        }
    }
}
