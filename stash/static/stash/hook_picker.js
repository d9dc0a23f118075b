/* Hook picker: picking a hook shows its params schema and fills the params with its defaults. */
'use strict';
{
    const same = (a, b) => {
        try {
            return JSON.stringify(JSON.parse(a)) === JSON.stringify(JSON.parse(b));
        } catch (error) {
            return false;
        }
    };

    function helpBox(select) {
        // Below the field: after the admin's label-and-field row, or the select in a table cell.
        const anchor = select.closest('.flex-container') || select;
        let box = anchor.parentElement.querySelector('.stash-hook-help');
        if (!box) {
            box = document.createElement('div');
            box.className = 'stash-hook-help';
            anchor.after(box);
        }
        return box;
    }

    function folded(title, content, open) {
        const details = document.createElement('details');
        details.open = open;
        const summary = document.createElement('summary');
        summary.textContent = title;
        details.append(summary, ...content);
        return details;
    }

    // Text only (textContent): nothing from a hook's schema is ever read as HTML.
    function show(select) {
        const option = select.selectedOptions[0];
        const box = helpBox(select);
        box.replaceChildren();
        if (!option || !option.value) return;
        if (!option.dataset.schema) {  // a hook no longer registered: say so
            box.textContent = option.dataset.description || '';
            return;
        }
        const params = document.createElement('div');
        params.className = 'stash-params';
        params.textContent = option.dataset.params;
        const schema = document.createElement('pre');
        schema.textContent = option.dataset.schema;
        // Open on the hook's own page, folded in the stash's table of hooks.
        box.append(folded('params schema', [params, folded('JSON Schema', [schema], false)],
                          !select.closest('.tabular')));
    }

    // Replace the params only while they are empty or still the previous hook's defaults.
    function fill(select, previous) {
        const params = document.getElementById(select.id.replace(/hook$/, 'params'));
        const option = select.selectedOptions[0];
        if (!params || !option || !option.dataset.defaults) return;
        const current = params.value.trim();
        if (!current || current === '{}' || (previous && same(current, previous.dataset.defaults || '{}'))) {
            params.value = option.dataset.defaults;
        }
    }

    document.addEventListener('change', (event) => {
        const select = event.target;
        if (!(select instanceof HTMLSelectElement) || !select.hasAttribute('data-hook-picker')) return;
        const previous = [...select.options].find((option) => option.value === select.dataset.previous);
        fill(select, previous);
        show(select);
        select.dataset.previous = select.value;
    });

    window.addEventListener('load', () => {
        document.querySelectorAll('select[data-hook-picker]').forEach((select) => {
            if (select.closest('.empty-form')) return;
            select.dataset.previous = select.value;
            show(select);
        });
    });
}
