package kernelkit

import (
	"fmt"

	"github.com/webtensor/webtensor/core"
)

// OneHotClasses is one_hot's class count: num_classes when given, else the
// largest index plus one (at least 0), which largest reads - the one value
// a backend must bring to the host before it can shape the output.
func OneHotClasses(a core.Attrs, numel int, largest func() (int64, error)) (int64, error) {
	classes := int64(a.Int("num_classes"))
	if classes >= 0 {
		return classes, nil
	}
	if numel == 0 {
		return 0, fmt.Errorf("cannot infer num_classes from an empty tensor; give num_classes")
	}
	top, err := largest()
	if err != nil {
		return 0, err
	}
	return max(top+1, 0), nil
}

// CheckOneHot is the rule for one_hot's indices: each in [0, classes). It
// returns the first problem, or nil.
func CheckOneHot(indices []int64, classes int64) error {
	for _, v := range indices {
		if err := OneHotIndexError(v, classes); err != nil {
			return err
		}
	}
	return nil
}

// OneHotIndexError says why index v is no class of classes, or nil when it
// is one (for a device check that reports the offending value).
func OneHotIndexError(v, classes int64) error {
	switch {
	case v < 0:
		return fmt.Errorf("class index %d is negative", v)
	case v >= classes:
		return fmt.Errorf("class index %d is out of range for num_classes %d", v, classes)
	}
	return nil
}
